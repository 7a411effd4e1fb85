/** The favorite star, edit and delete of one contact (list rows and the contact's page). */
import { ActionIcon, Button, Group, Stack } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { IconPencil, IconStar, IconStarFilled } from '@tabler/icons-react';
import { useState } from 'react';
import { fetchClient, invalidatePaths, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../shared/confirm';
import { ProblemAlert } from '../../shared/problem';
import { ContactForm } from './ContactForm';

type Contact = Schemas['Contact'];

export function FavoriteToggle({ contact: c }: { contact: Contact }) {
  const [error, setError] = useState<unknown>(null);
  async function toggle() {
    setError(null);
    const { error: failed } = await fetchClient.PATCH('/api/portal/contacts/{contact_id}', { params: { path: { contact_id: c.contact_id } }, body: { favorite: !c.favorite } });
    if (failed) return setError(failed);
    await invalidatePaths('/api/portal/contacts');
  }
  return (
    <>
      <ActionIcon variant="subtle" color="yellow" aria-label={`Favorite ${c.name}`} aria-pressed={c.favorite} onClick={() => void toggle()}>
        {c.favorite ? <IconStarFilled size={18} /> : <IconStar size={18} />}
      </ActionIcon>
      <ProblemAlert error={error} />
    </>
  );
}

export function ContactActions({ contact: c, tagOptions, onDeleted }: { contact: Contact; tagOptions?: string[]; onDeleted?: () => void }) {
  const [editing, { open, close }] = useDisclosure(false);
  const [error, setError] = useState<unknown>(null);
  async function remove() {
    setError(null);
    const { error: failed } = await fetchClient.DELETE('/api/portal/contacts/{contact_id}', { params: { path: { contact_id: c.contact_id } } });
    if (failed) return setError(failed);
    notifications.show({ message: `${c.name} deleted` });
    onDeleted?.();
    await invalidatePaths('/api/portal/contacts');
  }
  return (
    <Stack gap={4}>
      <Group gap="xs" wrap="nowrap">
        <Button size="xs" variant="light" leftSection={<IconPencil size={14} />} aria-label={`Edit ${c.name}`} onClick={open}>
          Edit
        </Button>
        <ConfirmButton size="xs" variant="light" aria-label={`Delete ${c.name}`} question={`Delete the contact ${c.name}?`} confirmLabel="Delete" onConfirm={() => void remove()}>
          Delete
        </ConfirmButton>
      </Group>
      {editing && <ContactForm contact={c} opened={editing} onClose={close} tagOptions={tagOptions} />}
      <ProblemAlert error={error} />
    </Stack>
  );
}
