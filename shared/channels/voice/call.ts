/**
 * One phone call on the ConversationRelay socket: the call is an active `voice` interaction for its
 * whole length (channel_ref the call sid); each caller utterance and each reply is published on
 * channel `voice` with the call sid in metadata; the reply is streamed to the caller token by token as
 * the model writes it. While the call lasts, MESSAGEs of the session from other channels enter the
 * call's model context as `[Real-time update from <channel>] <role>: <content>` (spec 000, voice
 * consumer); a user's message from another channel, arriving while the call is quiet, is answered
 * aloud at once ("I see you just wrote on Slack…"). Hanging up closes the interaction with the call's
 * transcript as final history.
 */
import { config } from '../../config.js';
import { logger } from '../../logger.js';
import { subscribeSession, type BusEvent } from '../../bus.js';
import { realtimeUpdate, type HistoryEntry } from '../../agent/history.js';
import { findUserByPhone } from '../../users/users.store.js';
import { resolveSession } from '../../sessions/resolve.js';
import { closeInteraction } from '../../sessions/interactions.js';
import { getContext } from '../../sessions/context.js';
import { acceptMessage } from '../../stream/index.js';
import { openInteraction, runTurn } from '../turn.js';
import { relayInboundSchema, type RelayInbound, type RelayOutbound } from './relay-messages.js';

export const VOICE = 'voice';

interface Live {
  sessionId: string;
  interactionId: string;
  userId: string;
  callSid: string;
  /** The call's model context: the session's history at the start, then every message of the call and of other channels. */
  context: HistoryEntry[];
  /** What was said on this call, in order (the final history). */
  transcript: HistoryEntry[];
  unsubscribe: () => void;
}

export class VoiceCall {
  private live: Live | undefined;
  private ending = false;
  /** Messages are handled one at a time, in order; an interrupt is not queued (it stops the reply at once). */
  private queue: Promise<void> = Promise.resolve();
  private turn: AbortController | undefined;
  private turns = 0;
  /** Caller ID alone (spoofable) earns the portal tool set; a PIN (or the carrier's full attestation) the person's rights. */
  private rightsProven = false;
  private readonly log = logger('channels.voice');

  constructor(private readonly send: (message: RelayOutbound) => void) {}

  /** The caller proved to be the person (PIN, or full attestation where trusted): later turns run with their rights. */
  proveRights(): void {
    this.rightsProven = true;
  }

  /** The model context of the call (tests and diagnostics). */
  get context(): readonly HistoryEntry[] {
    return this.live?.context ?? [];
  }

  /** One text frame from the relay. */
  receive(raw: string): void {
    let message: RelayInbound;
    try {
      const parsed = relayInboundSchema.safeParse(JSON.parse(raw));
      if (!parsed.success) return void this.log.warn({ issues: parsed.error.issues.slice(0, 3) }, 'relay message not understood; ignored');
      message = parsed.data;
    } catch {
      return void this.log.warn('relay frame is not JSON; ignored');
    }
    if (message.type === 'interrupt') return this.interrupt(message.utteranceUntilInterrupt);
    this.enqueue(() => this.handle(message));
  }

  private enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(step).catch((err) => this.log.error({ err }, 'voice call step failed'));
  }

  private async handle(message: RelayInbound): Promise<void> {
    if (this.ending) return;
    if (message.type === 'setup') return this.setup(message);
    if (!this.live) return;
    if (message.type === 'prompt') {
      // Partial transcriptions (partialPrompts) are not answered; the final one is.
      if (message.last === false || !message.voicePrompt.trim()) return;
      return this.answer(message.voicePrompt.trim(), { publishUser: true });
    }
    if (message.type === 'dtmf') return this.answer(`[keypad] ${message.digit}`, { publishUser: true });
    if (message.type === 'error') this.log.warn({ call_sid: this.live.callSid, description: message.description }, 'ConversationRelay reported an error');
  }

  private async setup(message: Extract<RelayInbound, { type: 'setup' }>): Promise<void> {
    if (this.live) return;
    // The session system switched off: a call opens no session (the relay's socket may outlive the flag's change).
    if (!config().sessions.enabled) return void this.send({ type: 'end' });
    const user = await findUserByPhone(message.from);
    if (!user) {
      this.speak(config().channels.voice.unknownCallerMessage);
      this.send({ type: 'end' });
      return;
    }
    const { session } = await resolveSession(user.user_id);
    const interactionId = await openInteraction(session.session_id, VOICE, message.callSid, { call_sid: message.callSid, from: message.from, to: message.to ?? null });
    const { conversation_history } = await getContext(session.session_id);
    const unsubscribe = await subscribeSession(session.session_id, (event) => this.onSessionEvent(event));
    this.live = { sessionId: session.session_id, interactionId, userId: user.user_id, callSid: message.callSid, context: [...conversation_history], transcript: [], unsubscribe };
    this.log.info({ call_sid: message.callSid, session_id: session.session_id }, 'call connected to its session');
  }

  /** The voice consumer: another channel's MESSAGE enters the call's context; a user's message is answered aloud when the call is quiet. */
  private onSessionEvent(event: BusEvent): void {
    const live = this.live;
    if (!live || event.event_type !== 'MESSAGE' || event.channel === VOICE) return;
    const entry: HistoryEntry = { role: event.data.role === 'assistant' ? 'assistant' : 'user', content: String(event.data.content ?? ''), channel: event.channel };
    // In the context the moment it arrives, so that whatever answers it (on its channel too) comes after it.
    live.context.push(entry);
    // Spoken about at once: the update itself is the turn's message, in the spec's form.
    if (entry.role === 'user' && !this.turn) this.enqueue(() => this.answer(realtimeUpdate(entry), { publishUser: false, update: entry }));
  }

  private speak(text: string): void {
    this.send({ type: 'text', token: text, last: true });
  }

  /** One turn: the caller's words (or an update from another channel) in, the reply streamed out and published. */
  private async answer(text: string, options: { publishUser: boolean; update?: HistoryEntry }): Promise<void> {
    const live = this.live!;
    const n = ++this.turns;
    const metadata = { call_sid: live.callSid };
    const key = `voice:${live.callSid}:${n}`;
    // An update from another channel is answered with what came before it (not its own channel's reply, already in the context after it).
    const history = options.update ? live.context.slice(0, live.context.indexOf(options.update)) : [...live.context];
    if (options.publishUser) {
      await acceptMessage(live.sessionId, { channel: VOICE, role: 'user', content: text, interaction_id: live.interactionId, metadata }, { idempotencyKey: `${key}:user` });
      live.transcript.push({ role: 'user', content: text, channel: VOICE });
    }
    // The caller's words enter the context as a voice message; an update is there already, as itself.
    if (!options.update) live.context.push({ role: 'user', content: text, channel: VOICE });
    const controller = new AbortController();
    this.turn = controller;
    let spoken = '';
    let reply: string;
    try {
      const result = await runTurn({
        channel: VOICE,
        session_id: live.sessionId,
        interaction_id: live.interactionId,
        user_id: live.userId,
        message: text,
        history,
        finalAttempt: true,
        fromPerson: true,
        // Caller ID alone earns the portal's tool set; a PIN or A-level attestation proves the rest.
        ...(this.rightsProven ? {} : { rolesAtMost: ['user'] as const }),
        signal: controller.signal,
        onToken: (token) => {
          spoken += token;
          this.send({ type: 'text', token, last: false });
        },
      });
      if (controller.signal.aborted) {
        // Interrupted (the stream may also end quietly when aborted): what the caller heard is what was said.
        reply = this.heard ?? spoken;
      } else if (result.error) {
        reply = result.reply;
        this.speak(reply);
      } else {
        reply = result.reply;
        // A model that does not stream (or a fixed answer) is spoken whole.
        if (!spoken) this.send({ type: 'text', token: reply, last: false });
        this.send({ type: 'text', token: '', last: true });
      }
    } finally {
      if (this.turn === controller) this.turn = undefined;
      this.heard = undefined;
    }
    if (!reply.trim()) return;
    live.context.push({ role: 'assistant', content: reply, channel: VOICE });
    live.transcript.push({ role: 'assistant', content: reply, channel: VOICE });
    await acceptMessage(
      live.sessionId,
      { channel: VOICE, role: 'assistant', content: reply, interaction_id: live.interactionId, metadata: controller.signal.aborted ? { ...metadata, interrupted: true } : metadata },
      { idempotencyKey: `${key}:assistant` },
    );
  }

  private heard: string | undefined;

  /** The caller spoke over the reply: the model stops, and the reply is recorded as far as it was heard. */
  private interrupt(utteranceUntilInterrupt: string): void {
    if (!this.turn) return;
    this.heard = utteranceUntilInterrupt;
    this.turn.abort();
  }

  /** The caller hung up (the socket closed): the interaction closes with the call's transcript. */
  async end(): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    this.turn?.abort();
    await this.queue;
    const live = this.live;
    if (!live) return;
    live.unsubscribe();
    try {
      await closeInteraction(live.interactionId, live.transcript.map(({ role, content }) => ({ role, content })), 'hangup');
    } catch (err) {
      this.log.warn({ err, call_sid: live.callSid }, 'the call interaction could not be closed (already closed with its session?)');
    }
  }
}
