/**
 * Live updates: one EventSource on the SRE event stream; each event invalidates the cached queries
 * of its domain, so open screens refetch what changed (server state stays in the query cache).
 */
import { useEffect } from 'react';
import { invalidatePaths } from '../api/client';

export const sreEventsPath = '/api/v1/sre/events';

const prefixesByTopic: Array<[RegExp, string[]]> = [
  [/^alert/, ['/api/v1/alerts', '/api/v1/incidents']],
  [/^incident/, ['/api/v1/incidents']],
  [/^runbook|^execution/, ['/api/v1/runbooks']],
  [/^discovery|^cmdb|^entity|^monitor|^recommendation/, ['/api/v1/cmdb']],
];

/** Subscribes while mounted; unknown event names refresh every SRE list. */
export function useSreEvents(): void {
  useEffect(() => {
    const source = new EventSource(sreEventsPath, { withCredentials: true });
    const onEvent = (e: MessageEvent<string>) => {
      let topic = e.type === 'message' ? '' : e.type;
      try {
        const data = JSON.parse(e.data) as { type?: string; event_type?: string };
        topic = data.type ?? data.event_type ?? topic;
      } catch {
        // Not JSON: the SSE event name is all there is.
      }
      const hit = prefixesByTopic.find(([re]) => re.test(topic));
      void invalidatePaths(...(hit ? hit[1] : ['/api/v1/alerts', '/api/v1/incidents', '/api/v1/runbooks', '/api/v1/cmdb']));
    };
    source.onmessage = onEvent;
    for (const name of ['alert', 'alert.fired', 'alert.changed', 'incident', 'runbook', 'discovery']) source.addEventListener(name, onEvent);
    return () => source.close();
  }, []);
}
