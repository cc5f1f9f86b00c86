const LABELS: Record<string, { text: string; icon: string }> = {
  received: { text: 'Received', icon: '●' },
  pending: { text: 'Pending', icon: '○' },
  delivered: { text: 'Delivered', icon: '✓' },
  failed: { text: 'Failed', icon: '!' },
  dead_letter: { text: 'Dead letter', icon: '✕' },
  active: { text: 'Active', icon: '●' },
  inactive: { text: 'Inactive', icon: '○' },
};

export function statusLabel(status: string): string {
  return LABELS[status]?.text ?? status;
}

/** A status as text with an icon and a colour (never colour alone); `data-status` holds the raw value. */
export function StatusBadge({ status, testId }: { status: string; testId?: string }) {
  const known = LABELS[status];
  return (
    <span class={`badge badge-${known ? status : 'unknown'}`} data-testid={testId} data-status={status}>
      <span class="badge-icon" aria-hidden="true">
        {known?.icon ?? '•'}
      </span>
      {known?.text ?? status}
    </span>
  );
}
