import { useEffect, useRef, useState } from 'preact/hooks';

async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall back below (permission denied, unfocused document)
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

interface Props {
  text: string;
  /** Visible text (default "Copy"). */
  label?: string;
  /** Accessible name, e.g. "Copy capture URL". */
  ariaLabel?: string;
  testId?: string;
  className?: string;
}

/** A button that copies `text` and says so (visibly and to screen readers). */
export function CopyButton({ text, label = 'Copy', ariaLabel, testId, className = 'btn btn-small' }: Props) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);

  // copyText never rejects (a failed copy resolves to false), so the click fires and forgets this.
  const onClick = async () => {
    const ok = await copyText(text);
    setState(ok ? 'copied' : 'failed');
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setState('idle'), 2000);
  };

  return (
    <>
      <button
        type="button"
        class={className}
        data-testid={testId}
        aria-label={ariaLabel}
        onClick={() => void onClick()}
        data-copied={state === 'copied' ? 'true' : undefined}
      >
        {state === 'copied' ? 'Copied ✓' : state === 'failed' ? 'Copy failed' : label}
      </button>
      <span class="sr-only" aria-live="polite">
        {state === 'copied'
          ? 'Copied to the clipboard'
          : state === 'failed'
            ? 'Could not copy; select the text and copy it by hand'
            : ''}
      </span>
    </>
  );
}
