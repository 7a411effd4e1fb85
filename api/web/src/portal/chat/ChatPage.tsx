/**
 * Web chat: the signed-in person talks to the agent (POST /api/portal/chat) and, over the session's
 * SSE stream, sees the messages of the other channels (Slack, voice, the messaging app…) arrive
 * live, each with role, content and source channel.
 */
import { Badge, Button, Card, Group, ScrollArea, Stack, Text, Textarea, Title } from '@mantine/core';
import { IconSend } from '@tabler/icons-react';
import { useEffect, useRef, useState } from 'react';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { hasFieldErrors, ProblemAlert, useFieldErrors } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { MessageBubble } from './MessageBubble';

interface ChatMessage {
  /** The message's id; a message still being sent has a local one until the server names it. */
  id: string;
  role: string;
  content: string;
  channel: string | null;
  pending?: boolean;
}


type StreamState = 'connecting' | 'live' | 'reconnecting' | 'idle';

/** How the assistant ends a question before a change (shared/agent/consent.ts): answered by the buttons below it. */
const asksToConfirm = (m: ChatMessage | undefined) => m?.role === 'assistant' && /Reply yes to go ahead, or no to cancel\.$/.test(m.content);

/**
 * Follows the session's stream while `sessionId` is set: MESSAGE events go to `onMessage`; the
 * end of the stream (the session closed, or a disconnect) to `onEnded`. After a disconnect the stream is reopened by hand
 * rather than by EventSource's fixed retry: after a backoff from 1 s doubling up to 30 s (spec 000's
 * suggestion), resuming after the last event seen (`last_event_id`), so nothing is missed or repeated.
 */
function useSessionStream(sessionId: string | null, onMessage: (m: ChatMessage) => void, onEnded: () => void): StreamState {
  const [state, setState] = useState<StreamState>('idle');
  const handlers = useRef({ onMessage, onEnded });
  handlers.current = { onMessage, onEnded };
  useEffect(() => {
    if (!sessionId) {
      setState('idle');
      return;
    }
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let backoff = 1000;
    let stopped = false;
    let lastEventId = '';
    const open = () => {
      setState('connecting');
      const resume = lastEventId ? `?last_event_id=${lastEventId}` : '';
      source = new EventSource(`/api/portal/chat/${sessionId}/events${resume}`, { withCredentials: true });
      source.onopen = () => {
        backoff = 1000;
        setState('live');
      };
      source.onmessage = (e: MessageEvent<string>) => {
        if (e.lastEventId) lastEventId = e.lastEventId;
        const event = JSON.parse(e.data) as Schemas['SessionEventEnvelope'];
        if (event.event_type === 'MESSAGE' && typeof event.data.content === 'string') {
          // A MESSAGE event's id is its message's (data.message_id), as the conversation read from the server names it.
          const id = String(event.data.message_id ?? e.lastEventId);
          handlers.current.onMessage({ id, role: String(event.data.role ?? 'user'), content: event.data.content, channel: event.channel });
        } else if (event.event_type === 'CONTEXT_UPDATE' && event.data.session_status === 'closed') {
          handlers.current.onEnded();
        }
      };
      source.onerror = () => {
        source?.close();
        if (stopped) return;
        setState('reconnecting');
        retry = setTimeout(open, backoff);
        backoff = Math.min(backoff * 2, 30_000);
        // The session may have closed or been replaced: the conversation read again says which to follow.
        handlers.current.onEnded();
      };
    };
    open();
    return () => {
      stopped = true;
      clearTimeout(retry);
      source?.close();
    };
  }, [sessionId]);
  return state;
}

const streamBadge: Record<StreamState, { color: string; label: string }> = {
  live: { color: 'green', label: 'live' },
  connecting: { color: 'gray', label: 'connecting…' },
  reconnecting: { color: 'orange', label: 'reconnecting…' },
  idle: { color: 'gray', label: 'no conversation yet' },
};

export default function ChatPage() {
  const chat = $api.useQuery('get', '/api/portal/chat');
  const [local, setLocal] = useState<ChatMessage[]>([]);
  const [text, setText] = useState('');
  const [awaitingReply, setAwaitingReply] = useState(false);
  // The session followed: the one the server names, or the one the first message just started.
  const [sessionId, setSessionId] = useState<string | null>(null);
  const serverSession = chat.data?.session_id;
  useEffect(() => {
    if (serverSession !== undefined) setSessionId(serverSession);
  }, [serverSession]);
  const refetchChat = () => invalidatePaths('/api/portal/chat');
  const send = $api.useMutation('post', '/api/portal/chat', {
    onSuccess: async (answer) => {
      setLocal((l) => [
        ...l.map((m) => (m.pending ? { ...m, id: answer.user_message_id, pending: false } : m)),
        ...(answer.reply !== null && answer.reply_message_id !== null ? [{ id: answer.reply_message_id, role: 'assistant', content: answer.reply, channel: 'chat' }] : []),
      ]);
      setAwaitingReply(answer.status === 'pending');
      setSessionId(answer.session_id);
      await refetchChat();
    },
    // The message was not taken: it goes back into the field instead of being lost.
    onError: (_error, sent) => {
      setLocal((l) => l.filter((m) => !m.pending));
      setText(sent.body.message);
    },
  });
  const fieldError = useFieldErrors(send.error);
  const stream = useSessionStream(
    sessionId,
    (m) => setLocal((l) => [...l, m]),
    () => void refetchChat(),
  );
  const history: ChatMessage[] = (chat.data?.messages ?? []).map((m) => ({ id: m.message_id, role: m.role, content: m.content, channel: m.channel ?? null }));
  // Messages kept here until the conversation read from the server holds them too. By id: two
  // messages of the same text (an "ok" sent twice) are two messages.
  const inHistory = new Set(history.map((m) => m.id));
  const shown = [...history, ...local.filter((m) => m.pending || !inHistory.has(m.id))];

  // A reply that was not ready in time arrives in the conversation: look again until it is there.
  useEffect(() => {
    if (!awaitingReply) return;
    const last = history.at(-1);
    if (last?.role === 'assistant') {
      setAwaitingReply(false);
      return;
    }
    const t = setTimeout(() => void refetchChat(), 2000);
    return () => clearTimeout(t);
  });

  const viewport = useRef<HTMLDivElement>(null);
  useEffect(() => {
    viewport.current?.scrollTo({ top: viewport.current.scrollHeight });
  }, [shown.length]);

  const confirming = asksToConfirm(shown.at(-1)) && !send.isPending;
  const confirmRow = useRef<HTMLDivElement>(null);
  // The buttons come with the finished reply, after its streamed text was scrolled to: bring them into view too.
  useEffect(() => {
    if (confirming) confirmRow.current?.scrollIntoView({ block: 'nearest' });
  }, [confirming]);

  const sending = useRef(0);
  const submit = (message = text.trim(), clear = true) => {
    if (!message || send.isPending) return;
    setLocal((l) => [...l, { id: `sending-${++sending.current}`, role: 'user', content: message, channel: 'chat', pending: true }]);
    if (clear) setText('');
    send.mutate({ body: { message } });
  };

  if (chat.isPending) return <Loading />;
  const badge = streamBadge[stream];
  return (
    <Stack gap="sm" h="calc(100dvh - 56px - 2 * var(--mantine-spacing-md))" mih={420}>
      <Group justify="space-between">
        <Title order={2}>Chat</Title>
        <Badge color={badge.color} variant="dot" aria-label="Live updates">
          {badge.label}
        </Badge>
      </Group>
      <Text c="dimmed" size="sm">
        Ask the assistant anything, including about your documents. Messages you send on other channels (SMS, email, Slack, voice, the messaging app) show up here as they happen.
      </Text>
      <ProblemAlert error={chat.error} />
      <Card withBorder p={0} style={{ flex: 1, minHeight: 0 }}>
        <ScrollArea h="100%" viewportRef={viewport} p="sm">
          <Stack gap="xs" role="list" aria-label="Messages">
            {shown.length === 0 && (
              <Text c="dimmed" ta="center" py="xl">
                No messages yet. Say hello below.
              </Text>
            )}
            {shown.map((m) => (
              <MessageBubble key={m.id} role={m.role} content={m.content} channel={m.channel} pending={m.pending} />
            ))}
            {confirming && (
              // The person's own answer, sent as their next message (the only thing that can run the change).
              <Group ref={confirmRow} gap="xs" role="group" aria-label="Confirm the change">
                <Button size="xs" color="green" onClick={() => submit('yes', false)}>
                  Confirm
                </Button>
                <Button size="xs" variant="default" onClick={() => submit('no', false)}>
                  Cancel
                </Button>
              </Group>
            )}
            {(send.isPending || awaitingReply) && (
              <Text size="sm" c="dimmed" aria-live="polite">
                The assistant is thinking…
              </Text>
            )}
          </Stack>
        </ScrollArea>
      </Card>
      {!hasFieldErrors(send.error) && <ProblemAlert error={send.error} />}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Group align="end" gap="xs" wrap="nowrap">
          <Textarea
            aria-label="Message"
            placeholder="Type a message — Enter sends, Shift+Enter adds a line"
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                submit();
              }
            }}
            error={fieldError('body.message')}
            autosize
            minRows={1}
            maxRows={6}
            style={{ flex: 1 }}
          />
          <Button type="submit" leftSection={<IconSend size={16} />} loading={send.isPending} disabled={!text.trim()}>
            Send
          </Button>
        </Group>
      </form>
    </Stack>
  );
}
