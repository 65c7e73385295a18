import cliProgress from 'cli-progress';

/**
 * Progress bars on stderr (cli-progress), one per step of a workload. Off a TTY the bars draw
 * nothing, so each step also logs one line when it starts, which keeps CI logs readable.
 */
export interface Step {
  tick(n?: number): void;
  /** Raise the total (when a step learns its size late). */
  setTotal(total: number): void;
  done(): void;
}

export class Progress {
  private readonly tty = process.stderr.isTTY === true;
  private readonly bars: cliProgress.MultiBar | undefined;

  constructor(private readonly enabled = true) {
    this.bars =
      enabled && this.tty
        ? new cliProgress.MultiBar(
            {
              stream: process.stderr,
              format: ' {bar} {percentage}% | {value}/{total} | {label}',
              barsize: 24,
              hideCursor: true,
              clearOnComplete: true,
              stopOnComplete: false,
              etaBuffer: 50,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
  }

  step(label: string, total: number): Step {
    if (this.enabled && !this.tty) process.stderr.write(`  ${label}\n`);
    const bar = this.bars?.create(Math.max(1, total), 0, { label });
    let value = 0;
    return {
      tick: (n = 1) => {
        value += n;
        bar?.update(value);
      },
      setTotal: (t) => bar?.setTotal(Math.max(1, t)),
      done: () => {
        if (bar !== undefined) this.bars?.remove(bar);
      },
    };
  }

  /** Text for stdout (tables); above the bars when both share a terminal. */
  print(text: string): void {
    if (this.bars !== undefined && process.stdout.isTTY === true) this.bars.log(text.endsWith('\n') ? text : `${text}\n`);
    else process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** A line above the bars (stderr). */
  log(line: string): void {
    if (!this.enabled) return;
    if (this.bars !== undefined) this.bars.log(`${line}\n`);
    else process.stderr.write(`${line}\n`);
  }

  stop(): void {
    this.bars?.stop();
  }
}
