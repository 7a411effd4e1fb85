/**
 * Live updates: one EventSource on the SRE event stream; each event invalidates the cached queries
 * of its domain, so open screens refetch what changed (server state stays in the query cache).
 */
import { useEffect } from 'react';
import { invalidatePaths, type Schemas } from '../api/client';

export const sreEventsPath = '/api/v1/sre/events';

const prefixesByTopic: Array<[RegExp, string[]]> = [
  [/^alert/, ['/api/v1/alerts', '/api/v1/incidents']],
  [/^incident/, ['/api/v1/incidents']],
  [/^runbook/, ['/api/v1/runbooks']],
  [/^discovery/, ['/api/v1/cmdb']],
];

/** Subscribes while mounted; an event type not listed here refreshes every SRE list. */
export function useSreEvents(): void {
  useEffect(() => {
    const source = new EventSource(sreEventsPath, { withCredentials: true });
    source.onmessage = (e: MessageEvent<string>) => {
      const event = JSON.parse(e.data) as Schemas['SreEvent'];
      const hit = prefixesByTopic.find(([re]) => re.test(event.type));
      void invalidatePaths(...(hit ? hit[1] : ['/api/v1/alerts', '/api/v1/incidents', '/api/v1/runbooks', '/api/v1/cmdb']));
    };
    return () => source.close();
  }, []);
}
