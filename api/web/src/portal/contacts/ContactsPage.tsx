/** My contacts: search, tags and favorites as URL filters; add, edit, favorite and delete. */
import { Anchor, Button, Card, Checkbox, Group, Stack, Table, TagsInput, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconPlus } from '@tabler/icons-react';
import { Link } from 'react-router';
import { $api, type Schemas } from '../../api/client';
import { ListBody, SearchInput } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { opt, useUrlState } from '../../shared/url-state';
import { Tags, useNarrow } from '../parts';
import { ContactActions, FavoriteToggle } from './ContactActions';
import { ContactForm } from './ContactForm';

/** On a phone each contact is a card: the table's columns would not fit. */
function ContactCards({ items, tagOptions }: { items: Schemas['Contact'][]; tagOptions: string[] }) {
  return (
    <Stack gap="xs" component="ul" aria-label="Contacts" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
      {items.map((c) => (
        <Card key={c.contact_id} withBorder padding="sm" component="li">
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
        </Card>
      ))}
    </Stack>
  );
}

export default function ContactsPage() {
  const narrow = useNarrow();
  const { values: f, set } = useUrlState(['search', 'tags', 'favorite'] as const);
  const [adding, { open, close }] = useDisclosure(false);
  const tags = f.tags ? f.tags.split(',') : [];
  const contacts = $api.useQuery('get', '/api/portal/contacts', {
    params: { query: { search: opt(f.search), tags: tags.length ? tags.join(',') : undefined, favorite: f.favorite === 'true' ? 'true' : undefined } },
  });
  // Every tag in use, for the filter's suggestions (the unfiltered list is the same cached query as an unfiltered view).
  const all = $api.useQuery('get', '/api/portal/contacts', { params: { query: {} } });
  const tagOptions = [...new Set((all.data?.contacts ?? []).flatMap((c) => c.tags))].sort();
  const items = contacts.data?.contacts ?? [];
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
      <Group align="end" gap="sm" wrap="wrap">
        <SearchInput placeholder="name, email, phone, company" value={f.search} onSearch={(search) => set({ search })} w={{ base: '100%', sm: 240 }} />
        <TagsInput label="Tags" placeholder="every tag" data={tagOptions} value={tags} onChange={(v) => set({ tags: v.join(',') })} w={{ base: '100%', sm: 240 }} clearable />
        <Checkbox label="Favorites only" checked={f.favorite === 'true'} onChange={(e) => set({ favorite: e.currentTarget.checked ? 'true' : '' })} mb={8} />
      </Group>
      <ProblemAlert error={contacts.error} />
      <ListBody pending={contacts.isPending} count={items.length} empty={filtered ? 'No contacts match these filters.' : 'No contacts yet: add one with New contact.'}>
        {narrow ? (
          <ContactCards items={items} tagOptions={tagOptions} />
        ) : (
          <Table.ScrollContainer minWidth={760}>
            <Table striped highlightOnHover aria-label="Contacts">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th w={40}>
                    <Text size="sm" fw={600} aria-label="Favorite">
                      ★
                    </Text>
                  </Table.Th>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Email</Table.Th>
                  <Table.Th>Phone</Table.Th>
                  <Table.Th>Company</Table.Th>
                  <Table.Th>Tags</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {items.map((c) => (
                  <Table.Tr key={c.contact_id}>
                    <Table.Td>
                      <FavoriteToggle contact={c} />
                    </Table.Td>
                    <Table.Td>
                      <Link to={`/contacts/${c.contact_id}`}>{c.name}</Link>
                    </Table.Td>
                    <Table.Td>{c.email ? <Anchor href={`mailto:${c.email}`}>{c.email}</Anchor> : '—'}</Table.Td>
                    <Table.Td>{c.phone ? <Anchor href={`tel:${c.phone}`}>{c.phone}</Anchor> : '—'}</Table.Td>
                    <Table.Td>{c.company ?? '—'}</Table.Td>
                    <Table.Td>
                      <Tags tags={c.tags} />
                    </Table.Td>
                    <Table.Td>
                      <ContactActions contact={c} tagOptions={tagOptions} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </ListBody>
    </Stack>
  );
}
