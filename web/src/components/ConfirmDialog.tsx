import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

interface Props {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  confirmTestId?: string;
}

/**
 * A modal confirmation on the native <dialog>: showModal() makes the rest of the page inert (focus
 * stays inside), Escape cancels, and focus returns to where it was when it closes (or to the page's main
 * when that is gone, as the button of a row just deleted).
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  busy,
  onConfirm,
  onCancel,
  confirmTestId,
}: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  const returnFocus = useRef<Element | null>(null);

  useEffect(() => {
    const node = dialog.current;
    if (!node) return;
    if (open && !node.open) {
      returnFocus.current = document.activeElement;
      node.showModal();
      cancelButton.current?.focus();
    } else if (!open && node.open) {
      node.close();
    }
  }, [open]);

  useEffect(() => {
    const node = dialog.current;
    if (!node) return;
    const onClose = () => {
      const target = returnFocus.current;
      if (target instanceof HTMLElement && target.isConnected) target.focus();
      else document.getElementById('main')?.focus();
    };
    const onCancelEvent = (event: Event) => {
      event.preventDefault();
      onCancel();
    };
    node.addEventListener('close', onClose);
    node.addEventListener('cancel', onCancelEvent);
    return () => {
      node.removeEventListener('close', onClose);
      node.removeEventListener('cancel', onCancelEvent);
    };
  }, [onCancel]);

  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="confirm-title">
      <h2 id="confirm-title">{title}</h2>
      <div class="dialog-body">{children}</div>
      <div class="dialog-actions">
        <button type="button" class="btn" ref={cancelButton} onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          class="btn btn-danger"
          data-testid={confirmTestId}
          onClick={onConfirm}
          disabled={busy}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
