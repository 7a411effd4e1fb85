/** A state as a coloured badge; keeps its full width in tight table cells. */
import { Badge, type BadgeProps } from '@mantine/core';
import { statusColor } from './format';

export function StatusBadge({ status, ...props }: BadgeProps & { status: string }) {
  return (
    <Badge color={statusColor[status] ?? 'gray'} variant="light" style={{ minWidth: 'max-content' }} {...props}>
      {status}
    </Badge>
  );
}
