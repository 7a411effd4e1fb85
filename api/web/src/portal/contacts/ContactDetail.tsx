/** One contact (a shareable address): its fields, favorite, edit and delete. */
import { Anchor, Card, Group, SimpleGrid, Stack, Title } from '@mantine/core';
import { useNavigate, useParams } from 'react-router';
import { $api } from '../../api/client';
import { when } from '../../shared/format';
import { BackLink } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Loading } from '../../shared/states';
import { Field, Tags } from '../parts';
import { ContactActions, FavoriteToggle } from './ContactActions';

export default function ContactDetail() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const contact = $api.useQuery('get', '/api/portal/contacts/{contact_id}', { params: { path: { contact_id: id } } });
  const c = contact.data;
  return (
    <Stack gap="sm">
      <BackLink to="/contacts">Contacts</BackLink>
      <ProblemAlert error={contact.error} />
      {contact.isPending && <Loading />}
      {c && (
        <>
          <Group gap="xs" wrap="nowrap">
            <FavoriteToggle contact={c} />
            <Title order={2}>{c.name}</Title>
          </Group>
          <Card withBorder>
            <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="md">
              <Field label="Email">{c.email ? <Anchor href={`mailto:${c.email}`}>{c.email}</Anchor> : '—'}</Field>
              <Field label="Phone">{c.phone ? <Anchor href={`tel:${c.phone}`}>{c.phone}</Anchor> : '—'}</Field>
              <Field label="Company">{c.company ?? '—'}</Field>
              <Field label="Tags"><Tags tags={c.tags} /></Field>
              <Field label="Added">{when(c.created_at)}</Field>
              <Field label="Changed">{when(c.updated_at)}</Field>
            </SimpleGrid>
          </Card>
          <ContactActions contact={c} onDeleted={() => void navigate('/contacts', { replace: true })} />
        </>
      )}
    </Stack>
  );
}
