/** Live CRM: one EventSource on the CRM stream while a CRM screen is open; each event refreshes the cached CRM queries. */
import { useEffect } from 'react';
import { invalidatePaths, type Schemas } from '../../api/client';

export const crmEventsPath = '/api/v1/crm/events';

const prefixesByTopic: Record<Schemas['CrmEvent']['type'], string[]> = {
  'lead.created': ['/api/v1/leads'],
  'lead.changed': ['/api/v1/leads'],
  'opportunity.changed': ['/api/v1/opportunities', '/api/v1/pipelines', '/api/v1/accounts'],
  'account.changed': ['/api/v1/accounts'],
};

export function useCrmEvents(): void {
  useEffect(() => {
    const source = new EventSource(crmEventsPath, { withCredentials: true });
    source.onmessage = (e: MessageEvent<string>) => {
      const event = JSON.parse(e.data) as Schemas['CrmEvent'];
      void invalidatePaths(...(prefixesByTopic[event.type] ?? ['/api/v1/leads', '/api/v1/opportunities', '/api/v1/accounts', '/api/v1/pipelines']));
    };
    return () => source.close();
  }, []);
}
