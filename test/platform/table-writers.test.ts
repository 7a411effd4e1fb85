import { describe, expect, it } from 'vitest';
import { describeReport, tableWriters } from '../helpers/table-writers.js';

describe('one store per aggregate', () => {
  it('every table is written by one module, apart from named operation files (*.sql.ts)', () => {
    const report = tableWriters();
    console.log(describeReport(report));
    expect(report.tables.length).toBeGreaterThan(40);
    expect(report.shared, `tables written by more than one module; move the statements into the aggregate's store, or into an <operation>.sql.ts when they deliberately span aggregates:\n${describeReport(report)}`).toEqual([]);
  });

  it('every write names a table the check can read; a table named at run time only in an operation file', () => {
    expect(tableWriters().unresolved).toEqual([]);
    const stray = { file: 'shared/stray-prune.ts', text: 'export const p = (k, t) => k.raw(`delete from ?? where created_at < now()`, [t]);' };
    expect(tableWriters([stray]).unresolved).toEqual(['shared/stray-prune.ts:1']);
    expect(tableWriters([{ ...stray, file: 'shared/stray-prune.sql.ts' }]).unresolved).toEqual([]);
  });

  it('a second module writing a table fails the check, naming the table and both modules', () => {
    const knexWriter = { file: 'shared/crm/stray.ts', text: `export const f = (k) => k('crm_history').where({ id: 1 }).delete();` };
    const sqlWriter = { file: 'shared/sre/stray.ts', text: 'export const g = (k) => k.raw(`update sre_incident_timeline set message = ? where id = ?`, [1, 2]);' };
    const report = tableWriters([knexWriter, sqlWriter]);
    expect(report.shared).toEqual([
      { table: 'crm_history', modules: ['shared/crm/history.store.ts', 'shared/crm/stray.ts'] },
      { table: 'sre_incident_timeline', modules: ['shared/sre/incidents/incident.store.ts', 'shared/sre/stray.ts'] },
    ]);
    expect(describeReport(report)).toContain('crm_history: shared/crm/history.store.ts, shared/crm/stray.ts');
  });

  it('an operation file may write tables of several aggregates', () => {
    const operation = { file: 'shared/crm/stray-operation.sql.ts', text: 'export const h = (k) => k.raw(`insert into crm_history (entity_id) select id from crm_leads`);' };
    const report = tableWriters([operation]);
    expect(report.shared).toEqual([]);
    expect(report.operations.get('crm_history')).toContain('shared/crm/stray-operation.sql.ts');
  });
});
