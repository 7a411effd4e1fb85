/**
 * A local server speaking the OpenAI chat-completions wire format (POST /v1/chat/completions), so
 * the real `openai` client is exercised. Each request is recorded; `answer` decides the reply from
 * the request, as a model would from its context.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

export interface ChatRequest {
  headers: IncomingMessage['headers'];
  body: {
    model: string;
    messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
    tools?: Array<{ type: string; function: { name: string; description?: string; parameters: Record<string, unknown> } }>;
    response_format?: { type: string };
    stream?: boolean;
  };
}

/** The model's reply: text, tool calls, or a failure of the endpoint with this HTTP status (an OpenAI error document). */
export type LlmAnswer = { content: string; chunkDelayMs?: number } | { tool_calls: Array<{ id: string; name: string; arguments: string }> } | { status: number };

/** Starts the server; `answer` gives the model's reply to each request. */
export async function startLocalLlm(answer: (req: ChatRequest) => LlmAnswer) {
  const requests: ChatRequest[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
        return;
      }
      const request: ChatRequest = { headers: req.headers, body: JSON.parse(raw) };
      requests.push(request);
      const a = answer(request);
      if ('status' in a) {
        // retry-after-ms 0: the openai client's own retries of a failure follow at once (tests stay fast).
        res.writeHead(a.status, { 'content-type': 'application/json', 'retry-after-ms': '0' }).end(JSON.stringify({ error: { message: `the model endpoint failed (${a.status})`, type: 'server_error' } }));
        return;
      }
      if (request.body.stream) {
        // Streamed as the API streams it: chat.completion.chunk events, one per word, then [DONE].
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: Record<string, unknown>, finish: string | null) =>
          res.write(`data: ${JSON.stringify({ id: `chatcmpl-${requests.length}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: request.body.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`);
        if ('content' in a) {
          chunk({ role: 'assistant', content: '' }, null);
          const words = a.content.match(/\S+\s*/g) ?? [];
          if (a.chunkDelayMs) {
            // A slow model: one word per chunkDelayMs (the client may abort meanwhile).
            const next = (i: number) => {
              if (res.destroyed) return;
              if (i === words.length) return void (chunk({}, 'stop'), res.end('data: [DONE]\n\n'));
              chunk({ content: words[i] }, null);
              setTimeout(() => next(i + 1), a.chunkDelayMs);
            };
            return next(0);
          }
          for (const word of words) chunk({ content: word }, null);
          chunk({}, 'stop');
        } else {
          a.tool_calls.forEach((c, index) => chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }] }, null));
          chunk({}, 'tool_calls');
        }
        res.end('data: [DONE]\n\n');
        return;
      }
      const message =
        'content' in a
          ? { role: 'assistant', content: a.content }
          : { role: 'assistant', content: null, tool_calls: a.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: request.body.model,
          choices: [{ index: 0, message, logprobs: null, finish_reason: 'content' in a ? 'stop' : 'tool_calls' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * The model of a test file: starts the local server, points the platform's LLM settings at it
 * (before the platform reads its configuration) and closes it after the file.
 */
export async function useLocalLlm(answer: (req: ChatRequest) => LlmAnswer) {
  const llm = await startLocalLlm(answer);
  process.env.LLM_PROVIDER = 'openai';
  process.env.LLM_BASE_URL = llm.baseUrl;
  afterAll(() => llm.close());
  return llm;
}
