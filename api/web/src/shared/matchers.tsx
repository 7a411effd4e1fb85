/** Editor of Alertmanager-style matchers (incident rules and runbooks); field errors land on their row. */
import { ActionIcon, Badge, Button, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconTrash } from '@tabler/icons-react';
import type { Schemas } from '../api/client';

export type Matcher = Schemas['AlertMatcher'];
const ops = ['=', '!=', '=~', '!~'] as const;

export function MatchersInput({
  value,
  onChange,
  fieldError,
  emptyText = 'No matchers: every alert matches.',
}: {
  value: Matcher[];
  onChange: (m: Matcher[]) => void;
  fieldError: (path: string) => string | undefined;
  /** What an empty list means where the editor is used. */
  emptyText?: string;
}) {
  const update = (i: number, patch: Partial<Matcher>) => onChange(value.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  return (
    <Stack gap={6}>
      <Text size="sm" fw={500}>
        Matchers
      </Text>
      {value.length === 0 && (
        <Text size="sm" c="dimmed">
          {emptyText}
        </Text>
      )}
      {value.map((m, i) => (
        <Group key={i} gap={6} align="start" wrap="nowrap">
          <TextInput aria-label={`Matcher ${i + 1} label`} placeholder="label" value={m.label} onChange={(e) => update(i, { label: e.currentTarget.value })} error={fieldError(`body.matchers.${i}.label`)} w={130} />
          <Select aria-label={`Matcher ${i + 1} operator`} data={[...ops]} value={m.op ?? '='} onChange={(op) => update(i, { op: (op ?? '=') as Matcher['op'] })} w={72} allowDeselect={false} />
          <TextInput aria-label={`Matcher ${i + 1} value`} placeholder="value" value={m.value} onChange={(e) => update(i, { value: e.currentTarget.value })} error={fieldError(`body.matchers.${i}.value`)} style={{ flex: 1 }} />
          <ActionIcon variant="subtle" color="red" aria-label={`Remove matcher ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))} mt={4}>
            <IconTrash size={16} />
          </ActionIcon>
        </Group>
      ))}
      <Button variant="light" size="xs" w="fit-content" onClick={() => onChange([...value, { label: '', op: '=', value: '' }])}>
        Add matcher
      </Button>
    </Stack>
  );
}

export const matcherText = (m: Matcher) => `${m.label}${m.op ?? '='}"${m.value}"`;

/** Matchers as badges in a table cell; none means every alert. */
export function MatcherBadges({ matchers }: { matchers: Matcher[] }) {
  if (!matchers.length)
    return (
      <Text span c="dimmed" size="sm">
        any alert
      </Text>
    );
  return matchers.map((m, i) => (
    <Badge key={i} variant="outline" mr={4} tt="none">
      {matcherText(m)}
    </Badge>
  ));
}
