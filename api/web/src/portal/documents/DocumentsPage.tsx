/**
 * My documents: filters in the URL (category, tags, rag_status, text over file names), upload,
 * rag_status that moves live while indexing, re-index and delete, and search over the contents.
 */
import { Card, Group, Select, Stack, TagsInput, Text, Title } from '@mantine/core';
import { Fragment } from 'react';
import { Link } from 'react-router';
import { $api, type Schemas } from '../../api/client';
import { when } from '../../shared/format';
import { DataTable } from '../../shared/data-table';
import { SearchInput } from '../../shared/layout';
import { ProblemAlert } from '../../shared/problem';
import { Loading, Empty } from '../../shared/states';
import { opt, useUrlState } from '../../shared/url-state';
import { fileSize, pollWhileIndexing, RagStatus, ragStatuses } from './rag';
import { UploadForm } from './UploadForm';
import { DocumentActions } from './DocumentActions';
import { Tags } from '../parts';

type Document = Schemas['Document'];
type RagStatusValue = Document['rag_status'];

/** Two filters a row on a phone. */
const half = 'calc(50% - var(--mantine-spacing-sm) / 2)';

/** A snippet from the search, its matches (wrapped in ** ** by the API) in <mark>. */
export function Snippet({ text }: { text: string }) {
  return (
    <Text size="sm">
      {text.split('**').map((part, i) => (i % 2 ? <mark key={i}>{part}</mark> : <Fragment key={i}>{part}</Fragment>))}
    </Text>
  );
}

function SearchResults({ q }: { q: string }) {
  const search = $api.useQuery('get', '/api/portal/documents/search', { params: { query: { q, limit: 10 } } });
  const hits = search.data?.hits ?? [];
  return (
    <Card withBorder component="section" aria-label="Search results">
      <Text fw={600} mb="xs">
        Found in your documents for “{q}”
      </Text>
      <ProblemAlert error={search.error} />
      {search.isPending ? (
        <Loading label="Searching…" />
      ) : !hits.length ? (
        <Empty>Nothing in your indexed documents matches.</Empty>
      ) : (
        <Stack gap="sm" component="ol" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {hits.map((h) => (
            <li key={`${h.document_id}-${h.chunk}`} aria-label={`Hit in ${h.filename}`}>
              <Group gap="xs" wrap="nowrap">
                <Link to={`/documents/${h.document_id}`}>{h.filename}</Link>
                <Text size="xs" c="dimmed">
                  rank {h.rank.toFixed(3)}
                </Text>
              </Group>
              <Snippet text={h.snippet} />
            </li>
          ))}
        </Stack>
      )}
    </Card>
  );
}

export default function DocumentsPage() {
  const { values: f, set } = useUrlState(['category', 'tags', 'rag_status', 'text', 'q'] as const);
  const tags = f.tags ? f.tags.split(',') : [];
  const documents = $api.useQuery(
    'get',
    '/api/portal/documents',
    { params: { query: { category: opt(f.category), tags: tags.length ? tags.join(',') : undefined, rag_status: opt(f.rag_status) as RagStatusValue | undefined } } },
    { refetchInterval: pollWhileIndexing((d: { documents: Document[] }) => d.documents) },
  );
  // Every tag in use, for the filter's suggestions (the same cached query as the home page's list).
  const all = $api.useQuery('get', '/api/portal/documents', {});
  const tagOptions = [...new Set((all.data?.documents ?? []).flatMap((d) => d.tags))].sort();
  // The text filter narrows the loaded page by file name (the API filters category, tags and status).
  const text = f.text.toLowerCase();
  const items = (documents.data?.documents ?? []).filter((d) => !text || d.filename.toLowerCase().includes(text));
  return (
    <Stack gap="sm">
      <Title order={2}>Documents</Title>
      <UploadForm />
      <Group align="end" gap="sm" wrap="wrap">
        <SearchInput label="Search contents" placeholder="a phrase from a document" value={f.q} onSearch={(q) => set({ q })} w={{ base: '100%', sm: 260 }} />
      </Group>
      {f.q && <SearchResults q={f.q} />}
      <DataTable
        label="Documents"
        filters={
          <>
            <SearchInput label="File name" placeholder="part of a name" value={f.text} onSearch={(t) => set({ text: t })} w={{ base: half, sm: 180 }} />
            <SearchInput label="Category" placeholder="invoices" value={f.category} onSearch={(category) => set({ category })} w={{ base: half, sm: 150 }} />
            <TagsInput label="Tags" placeholder="every tag" data={tagOptions} value={tags} onChange={(v) => set({ tags: v.join(',') })} w={{ base: half, sm: 220 }} clearable />
            <Select label="Indexing status" placeholder="any" data={[...ragStatuses]} value={f.rag_status || null} onChange={(v) => set({ rag_status: v ?? '' })} w={{ base: half, sm: 160 }} clearable />
          </>
        }
        error={documents.error}
        pending={documents.isPending}
        empty={Object.values(f).some(Boolean) ? 'No documents match these filters.' : 'No documents yet: upload one above.'}
        rows={items}
        rowKey={(d) => d.document_id}
        minWidth={720}
        columns={[
          {
            header: 'File',
            cell: (d) => (
              <>
                <Link to={`/documents/${d.document_id}`}>{d.filename}</Link>
                <Text size="xs" c="dimmed">
                  {fileSize(d.size)}
                </Text>
              </>
            ),
          },
          { header: 'Category', cell: (d) => d.category ?? '—' },
          { header: 'Tags', cell: (d) => <Tags tags={d.tags} /> },
          { header: 'Indexing', cell: (d) => <RagStatus document={d} /> },
          { header: 'Uploaded', cell: (d) => when(d.uploaded_at) },
          { header: 'Actions', cell: (d) => <DocumentActions document={d} /> },
        ]}
        // On a phone each document is a card: the table's columns would not fit.
        card={(d) => (
          <>
            <Group justify="space-between" align="start" wrap="nowrap">
              <div style={{ minWidth: 0, overflowWrap: 'anywhere' }}>
                <Link to={`/documents/${d.document_id}`}>{d.filename}</Link>
                <Text size="xs" c="dimmed">
                  {fileSize(d.size)} · {when(d.uploaded_at)}
                </Text>
              </div>
              <RagStatus document={d} />
            </Group>
            {(d.category || d.tags.length > 0) && (
              <Group gap="xs" mt="xs">
                {d.category && <Text size="sm">{d.category}</Text>}
                {d.tags.length > 0 && <Tags tags={d.tags} />}
              </Group>
            )}
            <Group mt="xs">
              <DocumentActions document={d} />
            </Group>
          </>
        )}
      />
    </Stack>
  );
}
