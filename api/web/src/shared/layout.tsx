/** Small pieces every screen uses: the way back, the states of a list, the search field. */
import { Text, TextInput, type TextInputProps } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { Empty, Loading } from './states';

export function BackLink({ to, children }: { to: string; children: ReactNode }) {
  return (
    <Text size="sm">
      <Link to={to}>← {children}</Link>
    </Text>
  );
}

/** Loading while pending, the empty message without rows, else the rows. */
export function ListBody({ pending, count, empty, children }: { pending: boolean; count: number; empty: ReactNode; children: ReactNode }) {
  if (pending) return <Loading />;
  if (!count) return <Empty>{empty}</Empty>;
  return <>{children}</>;
}

/** A text filter that applies on Enter or when the field loses focus. */
export function SearchInput({ value, onSearch, label = 'Search', placeholder, w = 200 }: { value: string; onSearch: (q: string) => void; label?: string; placeholder: string; w?: TextInputProps['w'] }) {
  return (
    <TextInput
      label={label}
      placeholder={placeholder}
      defaultValue={value}
      onKeyDown={(e) => e.key === 'Enter' && onSearch(e.currentTarget.value.trim())}
      onBlur={(e) => onSearch(e.currentTarget.value.trim())}
      w={w}
    />
  );
}

/** Whether the screen is narrower than Mantine's `sm` breakpoint (48em, phones): lists then show cards instead of wide tables. Read at once, so the page does not flash the table first. */
export const useNarrow = (): boolean => useMediaQuery('(max-width: 48em)', false, { getInitialValueInEffect: false });
