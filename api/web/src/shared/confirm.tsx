/** A button that asks before it does something that cannot be undone. */
import { Button, Group, Modal, Text, type ButtonProps } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ReactNode } from 'react';

export function ConfirmButton({
  children,
  question,
  confirmLabel = 'Confirm',
  onConfirm,
  ...button
}: ButtonProps & { children: ReactNode; question: ReactNode; confirmLabel?: string; onConfirm: () => void }) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button {...button} onClick={open}>
        {children}
      </Button>
      <Modal opened={opened} onClose={close} title="Please confirm" centered>
        <Text mb="md">{question}</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button
            color={button.color ?? 'red'}
            onClick={() => {
              close();
              onConfirm();
            }}
          >
            {confirmLabel}
          </Button>
        </Group>
      </Modal>
    </>
  );
}
