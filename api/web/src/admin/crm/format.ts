/** How the CRM shows money, dates and statuses. */
export const money = (n: number | null | undefined) =>
  n === null || n === undefined ? '—' : n.toLocaleString(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });

export const day = (iso: string | null | undefined) => (iso ? new Date(`${iso.slice(0, 10)}T00:00:00`).toLocaleDateString(undefined, { dateStyle: 'medium' }) : '—');

export const leadStatusColor: Record<string, string> = { new: 'blue', contacted: 'cyan', qualified: 'teal', unqualified: 'gray', converted: 'green' };

/** What the button that moves a lead to a status says. */
export const moveLabel: Record<string, string> = { new: 'Reopen', contacted: 'Mark contacted', qualified: 'Mark qualified', unqualified: 'Mark unqualified', converted: 'Convert' };

export const leadSources = ['website', 'linkedin', 'referral', 'trade_show', 'cold_call', 'email_campaign', 'social_media', 'webinar'];
export const leadStatuses = ['new', 'contacted', 'qualified', 'unqualified', 'converted'];
