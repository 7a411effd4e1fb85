/** My contacts: search, tags and favorites as URL filters; add, edit, favorite and delete. */
import { Anchor, Button, Checkbox, Group, Stack, TagsInput, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconPlus } from '@tabler/icons-react';
import { Link } from 'react-router';
import { $api } from '../../api/client';
import { DataTable } from '../../shared/data-table';
import { SearchInput } from '../../shared/layout';
import { opt, useUrlState } from '../../shared/url-state';
import { Tags } from '../parts';
import { ContactActions, FavoriteToggle } from './ContactActions';
import { ContactForm } from './ContactForm';

export default function ContactsPage() {
  const { values: f, set } = useUrlState(['search', 'tags', 'favorite'] as const);
  const [adding, { open, close }] = useDisclosure(false);
  const tags = f.tags ? f.tags.split(',') : [];
  const contacts = $api.useQuery('get', '/api/portal/contacts', {
    params: { query: { search: opt(f.search), tags: tags.length ? tags.join(',') : undefined, favorite: f.favorite === 'true' ? 'true' : undefined } },
  });
  // Every tag in use, for the filter's suggestions (the unfiltered list is the same cached query as an unfiltered view).
  const all = $api.useQuery('get', '/api/portal/contacts', { params: { query: {} } });
  const tagOptions = [...new Set((all.data?.contacts ?? []).flatMap((c) => c.tags))].sort();
  const filtered = Boolean(f.search || f.tags || f.favorite);
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Contacts</Title>
        <Button leftSection={<IconPlus size={16} />} onClick={open}>
          New contact
        </Button>
      </Group>
      {adding && <ContactForm opened={adding} onClose={close} tagOptions={tagOptions} />}
      <DataTable
        label="Contacts"
        filters={
          <>
            <SearchInput placeholder="name, email, phone, company" value={f.search} onSearch={(search) => set({ search })} w={{ base: '100%', sm: 240 }} />
            <TagsInput label="Tags" placeholder="every tag" data={tagOptions} value={tags} onChange={(v) => set({ tags: v.join(',') })} w={{ base: '100%', sm: 240 }} clearable />
            <Checkbox label="Favorites only" checked={f.favorite === 'true'} onChange={(e) => set({ favorite: e.currentTarget.checked ? 'true' : '' })} mb={8} />
          </>
        }
        error={contacts.error}
        pending={contacts.isPending}
        empty={filtered ? 'No contacts match these filters.' : 'No contacts yet: add one with New contact.'}
        rows={contacts.data?.contacts ?? []}
        rowKey={(c) => c.contact_id}
        minWidth={760}
        columns={[
          {
            header: (
              <Text size="sm" fw={600} aria-label="Favorite">
                ★
              </Text>
            ),
            w: 40,
            cell: (c) => <FavoriteToggle contact={c} />,
          },
          { header: 'Name', cell: (c) => <Link to={`/contacts/${c.contact_id}`}>{c.name}</Link> },
          { header: 'Email', cell: (c) => (c.email ? <Anchor href={`mailto:${c.email}`}>{c.email}</Anchor> : '—') },
          { header: 'Phone', cell: (c) => (c.phone ? <Anchor href={`tel:${c.phone}`}>{c.phone}</Anchor> : '—') },
          { header: 'Company', cell: (c) => c.company ?? '—' },
          { header: 'Tags', cell: (c) => <Tags tags={c.tags} /> },
          { header: 'Actions', cell: (c) => <ContactActions contact={c} tagOptions={tagOptions} /> },
        ]}
        // On a phone each contact is a card: the table's columns would not fit.
        card={(c) => (
          <>
            <Group gap="xs" wrap="nowrap">
              <FavoriteToggle contact={c} />
              <Link to={`/contacts/${c.contact_id}`}>{c.name}</Link>
              {c.company && (
                <Text size="sm" c="dimmed" truncate>
                  {c.company}
                </Text>
              )}
            </Group>
            <Stack gap={2} my="xs" style={{ overflowWrap: 'anywhere' }}>
              {c.email && <Anchor href={`mailto:${c.email}`} size="sm">{c.email}</Anchor>}
              {c.phone && <Anchor href={`tel:${c.phone}`} size="sm">{c.phone}</Anchor>}
              {c.tags.length > 0 && <Tags tags={c.tags} />}
            </Stack>
            <ContactActions contact={c} tagOptions={tagOptions} />
          </>
        )}
      />
    </Stack>
  );
}
