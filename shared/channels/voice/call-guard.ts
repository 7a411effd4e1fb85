/**
 * The door of one relay socket, in front of the call (call.ts): the first message must be the
 * `setup` of the very call the relay token was issued for (CallSid, From, To), else the socket is
 * closed before anything is looked up; a caller's PIN, said ("my PIN is 4 8 1 5") or keyed
 * (`*4815#`), is checked here and never reaches the model or the transcript; caller turns are
 * counted against VOICE_MAX_TURNS_PER_CALL and a socket quiet both ways for VOICE_IDLE_SECONDS is closed.
 */
import { config } from '../../config.js';
import { logger } from '../../logger.js';
import { TooManyRequestsError } from '../../errors.js';
import { findUserByPhone } from '../../users/users.store.js';
import { checkVoicePin, hasVoicePin } from '../../users/voice-pin.js';
import type { RelayBinding } from './relay-token.js';
import { relayInboundSchema, type RelayInbound, type RelayOutbound } from './relay-messages.js';

export const PIN_ACCEPTED = 'Thank you, your PIN is accepted.';
export const PIN_REFUSED = 'That PIN is not right.';
export const PIN_LOCKED = 'Too many PIN attempts. Please try again later.';
export const TURNS_EXHAUSTED = 'This call has reached its length limit. Goodbye.';

/** The digits of a spoken PIN ("My PIN is 4 8 1 5.", "pin: 4815"), or undefined for anything else. */
export function spokenPin(text: string): string | undefined {
  const m = /^\s*(?:my\s+)?(?:pin|pin\s+code)\s*(?:is)?\s*[:,]?\s*((?:\d[\s,.-]*){4,12})\s*$/i.exec(text);
  return m ? m[1]!.replace(/\D/g, '') : undefined;
}

/** What the guard needs of the call and the socket. */
export interface GuardedCall {
  receive(raw: string): void;
  proveRights(): void;
}

export class CallGuard {
  private setupSeen = false;
  private userId: string | undefined;
  private hasPin = false;
  private proven = false;
  private keyed: string | undefined;
  private turns = 0;
  private closed = false;
  /** Frames are looked at one at a time, so a PIN is checked before the words after it reach the call. */
  private chain: Promise<void> = Promise.resolve();
  private readonly idle: NodeJS.Timeout;
  private readonly log = logger('channels.voice');

  constructor(
    private readonly binding: RelayBinding,
    private readonly call: GuardedCall,
    private readonly socket: { send(message: RelayOutbound): void; close(code: number, reason: string): void },
  ) {
    this.idle = setTimeout(() => this.close(1000, 'idle'), config().channels.voice.idleSeconds * 1000);
  }

  /** Something crossed the socket (either way): the idle clock starts again. */
  touch(): void {
    if (!this.closed) this.idle.refresh();
  }

  /** One text frame from the relay. */
  receive(raw: string): void {
    this.touch();
    this.chain = this.chain.then(() => this.frame(raw)).catch((err) => this.log.error({ err, call_sid: this.binding.callSid }, 'relay frame failed'));
  }

  /** The socket closed: no timer is left behind. */
  stop(): void {
    this.closed = true;
    clearTimeout(this.idle);
  }

  private close(code: number, reason: string): void {
    if (this.closed) return;
    this.stop();
    this.socket.close(code, reason);
  }

  private speak(text: string): void {
    this.socket.send({ type: 'text', token: text, last: true });
  }

  private async frame(raw: string): Promise<void> {
    if (this.closed) return;
    let message: RelayInbound | undefined;
    try {
      const parsed = relayInboundSchema.safeParse(JSON.parse(raw));
      message = parsed.success ? parsed.data : undefined;
    } catch {
      message = undefined;
    }
    if (!this.setupSeen) return this.setup(message, raw);
    if (!message) return this.call.receive(raw);
    if (message.type === 'dtmf' && (await this.keypad(message.digit))) return;
    if (message.type === 'prompt' && message.last !== false) {
      const pin = this.hasPin && !this.proven ? spokenPin(message.voicePrompt) : undefined;
      if (pin) return this.tryPin(pin);
    }
    if ((message.type === 'prompt' && message.last !== false && message.voicePrompt.trim()) || message.type === 'dtmf') {
      if (++this.turns > config().channels.voice.maxTurnsPerCall) {
        this.log.warn({ call_sid: this.binding.callSid, turns: this.turns - 1 }, 'call reached VOICE_MAX_TURNS_PER_CALL; ended');
        this.speak(TURNS_EXHAUSTED);
        this.socket.send({ type: 'end' });
        return this.close(1000, 'turn limit');
      }
    }
    this.call.receive(raw);
  }

  /** The first frame: the setup of the call the token names, or the socket is closed. */
  private async setup(message: RelayInbound | undefined, raw: string): Promise<void> {
    const b = this.binding;
    if (message?.type !== 'setup' || message.callSid !== b.callSid || message.from !== b.from || (message.to ?? '') !== b.to) {
      this.log.warn({ call_sid: b.callSid, setup_call_sid: message?.type === 'setup' ? message.callSid : null, type: message?.type ?? null }, 'relay setup does not match the call its token was issued for; socket closed');
      return this.close(1008, 'setup does not match the call');
    }
    this.setupSeen = true;
    const user = await findUserByPhone(b.from);
    this.userId = user?.user_id;
    this.hasPin = user ? await hasVoicePin(user.user_id) : false;
    this.call.receive(raw);
    if (b.attestedA && config().channels.voice.trustAttestationA) this.prove();
  }

  private prove(): void {
    this.proven = true;
    this.call.proveRights();
  }

  /** A keypad digit: `*` starts a PIN, digits extend it, `#` submits it (true: the digit was the PIN's, not a turn). */
  private async keypad(digit: string): Promise<boolean> {
    if (this.keyed === undefined) {
      if (digit !== '*' || !this.hasPin || this.proven) return false;
      this.keyed = '';
      return true;
    }
    if (digit === '#') {
      const pin = this.keyed;
      this.keyed = undefined;
      await this.tryPin(pin);
    } else if (/^\d$/.test(digit) && this.keyed.length < 12) {
      this.keyed += digit;
    } else {
      this.keyed = undefined;
    }
    return true;
  }

  private async tryPin(pin: string): Promise<void> {
    try {
      if (this.userId && (await checkVoicePin(this.userId, pin))) {
        this.prove();
        this.log.info({ call_sid: this.binding.callSid }, 'caller proved by PIN');
        return this.speak(PIN_ACCEPTED);
      }
      this.log.warn({ call_sid: this.binding.callSid }, 'wrong voice PIN');
      this.speak(PIN_REFUSED);
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      this.log.warn({ call_sid: this.binding.callSid }, 'voice PIN attempts over LIMIT_VOICE_PIN_ATTEMPTS');
      this.speak(PIN_LOCKED);
    }
  }
}
