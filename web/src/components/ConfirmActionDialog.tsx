import type { ComponentChildren } from 'preact';
import { useCallback } from 'preact/hooks';
import { useBusyAction } from '../hooks';
import { Alert } from './Alert';
import { ConfirmDialog } from './ConfirmDialog';

interface Props<T> {
  /** What the action is about; the dialog is open while it is set. */
  target: T | null;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  confirmTestId: string;
  action: (target: T) => Promise<unknown>;
  onDone: (target: T) => void;
  onCancel: () => void;
}

/** A ConfirmDialog that runs `action` on confirm: busy while it runs, and a refusal shown in the dialog. */
export function ConfirmActionDialog<T>({
  target,
  title,
  children,
  confirmLabel,
  confirmTestId,
  action,
  onDone,
  onCancel,
}: Props<T>) {
  const { busy, error, run, clearError } = useBusyAction();

  const cancel = useCallback(() => {
    if (busy) return;
    clearError();
    onCancel();
  }, [busy, clearError, onCancel]);

  const confirm = (confirmed: T) =>
    run(async () => {
      await action(confirmed);
      onDone(confirmed);
    });

  return (
    <ConfirmDialog
      open={target !== null}
      title={title}
      confirmLabel={confirmLabel}
      confirmTestId={confirmTestId}
      busy={busy}
      onConfirm={() => target !== null && void confirm(target)}
      onCancel={cancel}
    >
      {children}
      <Alert error={error} />
    </ConfirmDialog>
  );
}
