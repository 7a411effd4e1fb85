/** Create or edit an account: name, domain, industry, segment. */
import { Button, Group, Modal, Select, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { $api, invalidatePaths, type Schemas } from '../../api/client';
import { ProblemAlert, useFieldErrors } from '../../shared/problem';

type Account = Schemas['Account'];
export const segments = ['SMB', 'Mid-Market', 'Enterprise'] as const;
type Segment = (typeof segments)[number];

export function AccountForm({ account, onClose }: { account?: Account; onClose: () => void }) {
  const navigate = useNavigate();
  const [name, setName] = useState(account?.name ?? '');
  const [domain, setDomain] = useState(account?.domain ?? '');
  const [industry, setIndustry] = useState(account?.industry ?? '');
  const [segment, setSegment] = useState<string | null>(account?.segment ?? null);
  const done = async (saved: Account) => {
    await invalidatePaths('/api/v1/accounts');
    onClose();
    if (!account) navigate(`/admin/crm/accounts/${saved.id}`);
  };
  const create = $api.useMutation('post', '/api/v1/accounts', { onSuccess: done });
  const update = $api.useMutation('patch', '/api/v1/accounts/{account_id}', { onSuccess: done });
  const error = create.error ?? update.error;
  const fieldError = useFieldErrors(error);
  const body = { name, ...(domain && { domain }), ...(industry && { industry }), ...(segment && { segment: segment as Segment }) };
  return (
    <Modal opened onClose={onClose} title={account ? `Edit ${account.name}` : 'New account'}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (account) update.mutate({ params: { path: { account_id: account.id } }, body });
          else create.mutate({ body });
        }}
      >
        <Stack>
          <ProblemAlert error={error} shownBeside={['body.name', 'body.domain']} />
          <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError('body.name')} required />
          <TextInput label="Domain" placeholder="example.com" value={domain} onChange={(e) => setDomain(e.currentTarget.value)} error={fieldError('body.domain')} />
          <TextInput label="Industry" value={industry} onChange={(e) => setIndustry(e.currentTarget.value)} error={fieldError('body.industry')} />
          <Select label="Segment" data={[...segments]} value={segment} onChange={setSegment} clearable />
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending || update.isPending}>
              {account ? 'Save account' : 'Create account'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
