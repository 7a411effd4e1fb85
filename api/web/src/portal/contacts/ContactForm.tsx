/** Add or change a contact in a dialog; the API's field errors (400) sit beside their fields. */
import { Button, Group, Modal, Stack, Switch, TagsInput, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { fetchClient, invalidatePaths, type Schemas } from '../../api/client';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';

type Contact = Schemas['Contact'];

/** Empty optional fields are sent as null (cleared), not as empty strings the API would refuse. */
const orNull = (v: string) => (v.trim() === '' ? null : v.trim());

export function ContactForm({ contact, opened, onClose, tagOptions = [] }: { contact?: Contact; opened: boolean; onClose: () => void; tagOptions?: string[] }) {
  const [name, setName] = useState(contact?.name ?? '');
  const [email, setEmail] = useState(contact?.email ?? '');
  const [phone, setPhone] = useState(contact?.phone ?? '');
  const [company, setCompany] = useState(contact?.company ?? '');
  const [tags, setTags] = useState<string[]>(contact?.tags ?? []);
  const [favorite, setFavorite] = useState(contact?.favorite ?? false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fieldError = useFieldErrors(error);

  async function save() {
    setBusy(true);
    setError(null);
    const body = { name: name.trim(), email: orNull(email), phone: orNull(phone), company: orNull(company), tags, favorite };
    const { error: failed } = contact
      ? await fetchClient.PATCH('/api/portal/contacts/{contact_id}', { params: { path: { contact_id: contact.contact_id } }, body })
      : await fetchClient.POST('/api/portal/contacts', { body });
    setBusy(false);
    if (failed) return setError(failed);
    notifications.show({ message: contact ? `${body.name} saved` : `${body.name} added` });
    await invalidatePaths('/api/portal/contacts');
    onClose();
  }

  return (
    <Modal opened={opened} onClose={onClose} title={contact ? `Edit ${contact.name}` : 'New contact'} centered>
      <form noValidate onSubmit={(e) => (e.preventDefault(), void save())}>
        <Stack gap="sm">
          <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('body.name')} data-autofocus />
          <TextInput label="Email" placeholder="ada@example.com" value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={fieldError('body.email')} />
          <TextInput label="Phone" placeholder="+14155550100" description="International format (E.164)" value={phone} onChange={(e) => setPhone(e.currentTarget.value)} error={fieldError('body.phone')} />
          <TextInput label="Company" value={company} onChange={(e) => setCompany(e.currentTarget.value)} error={fieldError('body.company')} />
          <TagsInput label="Tags" placeholder="Enter to add" data={tagOptions} value={tags} onChange={setTags} error={fieldError('body.tags')} />
          <Switch label="Favorite" checked={favorite} onChange={(e) => setFavorite(e.currentTarget.checked)} />
          <ProblemAlert error={error} shownBeside={['body.name', 'body.email', 'body.phone', 'body.company', 'body.tags']} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={busy}>
              {contact ? 'Save contact' : 'Add contact'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
