/** A state as a coloured badge (its text the state, unless given); keeps its full width in tight table cells. */
import { Badge, type BadgeProps } from '@mantine/core';
import type { ReactNode } from 'react';
import { statusColor } from './format';

export function StatusBadge({ status, children, ...props }: BadgeProps & { status: string; children?: ReactNode }) {
  return (
    <Badge color={statusColor[status] ?? 'gray'} variant="light" style={{ minWidth: 'max-content' }} {...props}>
      {children ?? status}
    </Badge>
  );
}
