/** problem+json shown to people: the title and detail in an alert, field errors beside their fields. */
import { Alert } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { isProblem } from '../api/client';

/**
 * Title and detail of a failed request (any thrown value; problem+json gets its own words).
 * `shownBeside`: field paths a form shows beside its fields; a problem whose every error is one of
 * them needs no alert on top.
 */
export function ProblemAlert({ error, shownBeside }: { error: unknown; shownBeside?: string[] }) {
  if (!error) return null;
  const errors = isProblem(error) ? (error.errors ?? []) : [];
  if (shownBeside && errors.length && errors.every((e) => shownBeside.some((p) => e.path === p || e.path.startsWith(`${p}.`)))) return null;
  const title = isProblem(error) ? error.title : 'Request failed';
  const detail = isProblem(error) ? error.detail : error instanceof Error ? error.message : String(error);
  return (
    <Alert color="red" icon={<IconAlertTriangle size={18} />} title={title} role="alert" mb="sm">
      {detail}
    </Alert>
  );
}

/**
 * Field errors of a problem, by the path the API names (`body.name`, `body.matchers.0.value`):
 * `fieldError('body.name')` gives the message for Mantine's `error` prop.
 */
export function useFieldErrors(error: unknown): (path: string) => string | undefined {
  const errors = isProblem(error) ? (error.errors ?? []) : [];
  return (path) => {
    const hit = errors.find((e) => e.path === path || e.path.startsWith(`${path}.`));
    return hit?.message;
  };
}

/** Whether a failure is about named fields (shown beside them), so a form need not repeat it in an alert. */
export const hasFieldErrors = (error: unknown) => isProblem(error) && (error.errors?.length ?? 0) > 0;
