import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(__dirname, '..');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

/**
 * The layer rules of `npm run lint:layers` (.dependency-cruiser.cjs), run on small trees of their own: an
 * import down a layer passes, and each kind of wrong arrow fails with the rule's name and what to do.
 */
describe('the layers of src/ (npm run lint:layers)', () => {
  let tree: string;

  beforeEach(() => {
    tree = mkdtempSync(join(tmpdir(), 'hooktrail-layers-'));
    writeFileSync(join(tree, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs' } }));
  });

  afterEach(() => rmSync(tree, { recursive: true, force: true }));

  function write(files: Record<string, string>): void {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
  }

  async function cruise(): Promise<{ code: number; output: string }> {
    try {
      const { stdout } = await promisify(execFile)(
        DEPCRUISE,
        ['src', '--config', CONFIG, '--output-type', 'err-long'],
        { cwd: tree },
      );
      return { code: 0, output: stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string };
      return { code: failed.code, output: failed.stdout };
    }
  }

  it('passes imports that run down', async () => {
    write({
      'src/delivery/worker.ts': "import { QUEUE } from '../jobs/queue';\nexport const worker = QUEUE;\n",
      'src/jobs/queue.ts': "import { ms } from '../common/time';\nexport const QUEUE = ms;\n",
      'src/common/time.ts': 'export const ms = 1;\n',
    });
    const { code, output } = await cruise();
    expect(output).toContain('no dependency violations found');
    expect(code).toBe(0);
  });

  it('fails an import up a layer, naming the rule and what the folder may import', async () => {
    write({
      'src/metrics/metrics.ts':
        "import { DELIVERY } from '../delivery/delivery';\nexport const m = DELIVERY;\n",
      'src/delivery/delivery.ts': 'export const DELIVERY = 1;\n',
    });
    const { code, output } = await cruise();
    expect(code).not.toBe(0);
    expect(output).toContain('layers: metrics');
    expect(output).toContain('src/metrics/metrics.ts → src/delivery/delivery.ts');
    expect(output).toMatch(/src\/metrics is in the "platform" layer: it may import only common,/);
  });

  it('fails an import between two engines against their order', async () => {
    write({
      'src/notifications/notifier.ts': "import { ISSUE } from '../issues/issue';\nexport const n = ISSUE;\n",
      'src/issues/issue.ts': 'export const ISSUE = 1;\n',
    });
    const { code, output } = await cruise();
    expect(code).not.toBe(0);
    expect(output).toContain('layers: notifications');
  });

  it('fails a folder that no layer holds', async () => {
    write({
      'src/delivery/worker.ts': "import { x } from '../gadgets/x';\nexport const worker = x;\n",
      'src/gadgets/x.ts': 'export const x = 1;\n',
    });
    const { code, output } = await cruise();
    expect(code).not.toBe(0);
    expect(output).toContain('layers: every folder has one');
  });

  it('fails a circle inside one folder', async () => {
    write({
      'src/delivery/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
      'src/delivery/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
    });
    const { code, output } = await cruise();
    expect(code).not.toBe(0);
    expect(output).toContain('no circular imports');
  });
});
