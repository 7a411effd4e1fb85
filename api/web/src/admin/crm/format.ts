/** How the CRM shows money, dates and statuses. */
// One locale for money, whatever the browser's: the board, the lists and the forecast all read "$76,000".
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });
export const money = (n: number | null | undefined) => (n === null || n === undefined ? '—' : usd.format(n));

/** A lead's estimated value is free text ("76000", "$76,000"): the number in it, if it is one. */
export const estimateAmount = (text: string | null | undefined): number | null => {
  const n = Number((text ?? '').replace(/[\s$€£,]/g, ''));
  return text && Number.isFinite(n) && n > 0 ? n : null;
};

/** An estimated value as money when it is a number, else as it was typed. */
export const estimate = (text: string | null | undefined) => {
  const n = estimateAmount(text);
  return n === null ? (text ?? '—') : money(n);
};

export const day = (iso: string | null | undefined) => (iso ? new Date(`${iso.slice(0, 10)}T00:00:00`).toLocaleDateString(undefined, { dateStyle: 'medium' }) : '—');

export const leadStatusColor: Record<string, string> = { new: 'blue', contacted: 'cyan', qualified: 'teal', unqualified: 'gray', converted: 'green' };

/** What the button that moves a lead to a status says. */
export const moveLabel: Record<string, string> = { new: 'Reopen', contacted: 'Mark contacted', qualified: 'Mark qualified', unqualified: 'Mark unqualified', converted: 'Convert' };

export const leadSources = ['website', 'linkedin', 'referral', 'trade_show', 'cold_call', 'email_campaign', 'social_media', 'webinar'];
export const leadStatuses = ['new', 'contacted', 'qualified', 'unqualified', 'converted'];
