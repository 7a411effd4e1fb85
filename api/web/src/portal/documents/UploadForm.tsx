/** Upload: a file with its category and tags, sent as multipart; a refusal (413 too large, 415 type) sits beside the file field. */
import { Button, Card, FileInput, Group, TagsInput, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconUpload } from '@tabler/icons-react';
import { useState } from 'react';
import { fetchClient, invalidatePaths, isProblem } from '../../api/client';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';

const accept = '.pdf,.docx,.txt,.md,.markdown,.html,.htm,.csv,application/pdf,text/plain,text/markdown,text/html,text/csv';

export function UploadForm() {
  const [file, setFile] = useState<File | null>(null);
  const [category, setCategory] = useState('');
  const [tags, setTags] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const fieldError = useFieldErrors(error);
  // The file's own refusals (too large, unsupported type) belong beside the file field.
  const fileRefused = isProblem(error) && (error.status === 413 || error.status === 415);

  async function upload() {
    if (!file) return setError({ title: 'Choose a file', status: 400, errors: [{ path: 'body.file', message: 'Choose a file to upload' }] });
    setBusy(true);
    setError(null);
    const { data, error: failed } = await fetchClient.POST('/api/portal/documents', {
      body: { file, ...(category.trim() ? { category: category.trim() } : {}), ...(tags.length ? { tags: tags.join(',') } : {}) },
      // The route reads multipart/form-data (streamed, size-limited), as its API reference declares.
      bodySerializer: (body) => {
        const form = new FormData();
        for (const [name, value] of Object.entries(body)) form.append(name, value);
        return form;
      },
    });
    setBusy(false);
    if (failed) return setError(failed);
    notifications.show({ message: `${data.filename} uploaded; indexing…` });
    setFile(null);
    setCategory('');
    setTags([]);
    await invalidatePaths('/api/portal/documents');
  }

  return (
    <Card withBorder component="form" aria-label="Upload a document" noValidate onSubmit={(e) => (e.preventDefault(), void upload())}>
      <Group align="start" gap="sm" wrap="wrap">
        <FileInput
          label="File"
          placeholder="PDF, DOCX, TXT, MD, HTML, CSV"
          value={file}
          onChange={setFile}
          accept={accept}
          clearable
          w={{ base: '100%', sm: 300 }}
          error={fileRefused ? `${error.status === 413 ? 'Too large' : 'Not accepted'}: ${error.detail ?? error.title}` : fieldError('body.file')}
        />
        <TextInput label="Category" placeholder="invoices" value={category} onChange={(e) => setCategory(e.currentTarget.value)} w={{ base: '100%', sm: 160 }} error={fieldError('body.category')} />
        <TagsInput label="Tags" placeholder="Enter to add" value={tags} onChange={setTags} w={{ base: '100%', sm: 240 }} error={fieldError('body.tags')} />
        <Button type="submit" mt={{ base: 0, sm: 25 }} loading={busy} leftSection={<IconUpload size={16} />}>
          Upload
        </Button>
      </Group>
      {!fileRefused && <ProblemAlert error={error} shownBeside={['body.file', 'body.category', 'body.tags']} />}
    </Card>
  );
}
