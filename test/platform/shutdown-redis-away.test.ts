/**
 * A shutdown while Redis is away ends: the platform (API and workers, a queue listener, the bus and
 * command connections, all in use) runs against a Redis of this file's own, which is killed; the
 * shutdown then ends within its deadline, every step run, and the queues close within seconds (the
 * graces of shared/redis.ts and workers/runner.ts). A QUIT toward a Redis that is gone would
 * otherwise wait for a reconnection that never comes.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { eventually } from '../helpers/eventually.js';

const port = await freePort();
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const kill = () => redis.exitCode === null && redis.signalCode === null && redis.kill('SIGKILL');
process.once('exit', kill);
afterAll(kill);
// Before any platform module reads its configuration.
process.env.BUS_HOST = '127.0.0.1';
process.env.BUS_PORT = String(port);

const { startPlatform } = await import('../helpers/platform.js');
const { shutdownWithin } = await import('../../shared/lifecycle.js');
const { closeQueues, jobEvents } = await import('../../shared/queues.js');
const { redisAnswers } = await import('../../shared/redis.js');
const { newInteraction, newSession } = await import('../sessions/helpers.js');

describe('a shutdown while Redis is away', () => {
  it('runs every step within its deadline, and the queues close within seconds', async () => {
    const api = await startPlatform();
    await eventually(() => redisAnswers(), 10_000, 'the Redis of this file answering');
    // Every kind of connection in use: lanes and workers (a message), a queue listener, the bus's subscriber (a stream).
    const { sessionId } = await newSession(api);
    const chat = await newInteraction(api, sessionId, 'chat');
    const res = await api.request(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { channel: 'chat', role: 'user', content: 'before the outage', interaction_id: chat } });
    expect(res.status).toBe(200);
    await jobEvents('crm.ingest-lead-batch');
    const stream = new AbortController();
    const sse = await api.request(`/api/sessions/${sessionId}/events?channel=chat`, { signal: stream.signal, headers: { Accept: 'text/event-stream' } });
    expect(sse.status).toBe(200);

    redis.kill('SIGKILL');
    await eventually(async () => !(await redisAnswers()), 10_000, 'Redis gone');
    const started = Date.now();
    expect(await shutdownWithin(20_000), 'every shutdown step ran before the deadline').toBe(true);
    await closeQueues();
    stream.abort();
    const took = Date.now() - started;
    console.log(`shutdown with Redis away: ${took} ms`);
    expect(took).toBeLessThan(15_000);
  }, 60_000);
});
