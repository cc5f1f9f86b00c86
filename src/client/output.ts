import { createSpinner } from 'nanospinner';
import pc from 'picocolors';
import type { Colors } from 'picocolors/types';

export interface OutputStyle {
  color: boolean;
  spinner: boolean;
}

/**
 * Colour and a spinner only for a person at a terminal: never with --json or when stdout is piped, and
 * no colour when NO_COLOR is set to anything but an empty string (no-color.org).
 */
export function outputStyle(json: boolean, isTTY: boolean, env: NodeJS.ProcessEnv): OutputStyle {
  const person = !json && isTTY;
  return { color: person && !env.NO_COLOR, spinner: person };
}

/** Where commands print: the API's JSON for scripts with --json, short lines for people otherwise. */
export class Output {
  readonly colors: Colors;
  private readonly style: OutputStyle;

  constructor(
    readonly json: boolean,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.style = outputStyle(json, Boolean(stdout.isTTY), env);
    this.colors = pc.createColors(this.style.color);
  }

  /** With --json the answer itself, else its human view. */
  result<T>(value: T, view: (value: T, colors: Colors) => string): void {
    this.write(this.json ? JSON.stringify(value, null, 2) : view(value, this.colors));
  }

  /** One line of a running command (listen): with --json one JSON object per line. */
  record(value: object, text: string): void {
    this.write(this.json ? JSON.stringify(value) : text);
  }

  /** Runs `work` under a spinner (on stderr) when a person watches. */
  async busy<T>(text: string, work: () => Promise<T>): Promise<T> {
    if (!this.style.spinner) return work();
    const spinner = createSpinner(text).start();
    try {
      return await work();
    } finally {
      spinner.stop();
    }
  }

  private write(text: string): void {
    this.stdout.write(`${text}\n`);
  }
}
