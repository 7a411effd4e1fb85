/** An error of an external HTTP API, with the status it answered (none when unreachable). */
export class HttpStatusError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** 4xx other than 408/429 will not get better by retrying. */
  get permanent(): boolean {
    return this.status !== undefined && this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}
