/**
 * What `deno task bench` is asked to run: the full run, or one group of figures alone
 * (`--only=NAME`, `--backend etcd`); `--help` prints the options. A mistyped option is a usage
 * error (exit 2), not a full run of half an hour.
 *
 * @module
 */

import {
  admissionRows,
  authRows,
  crdRulesRows,
  crdVersionsRows,
  encryptionRows,
  etcdRows,
  limitsRows,
  workersRows,
} from "./rows.ts";
import { auditRows, metricsRows, tracingRows } from "./rows_operate.ts";

/** A group of figures: its rows, from servers it starts (main.ts's `onlyMain`). */
export type Rows = typeof authRows;

/** The figures `--only=<name>` runs alone; `--backend etcd` runs the etcd3 backend's. */
const ONLY: Record<string, Rows> = {
  auth: authRows,
  limits: limitsRows,
  encryption: encryptionRows,
  admission: admissionRows,
  audit: auditRows,
  metrics: metricsRows,
  tracing: tracingRows,
  "crd-versions": crdVersionsRows,
  "crd-rules": crdRulesRows,
  workers: workersRows,
};

const USAGE = `usage: deno task bench [--quick] [--rounds=N] [--only=NAME | --backend etcd]

  --quick        shorter measurement windows; noisier figures
  --rounds=N     rounds of the figures that alternate between servers (1-99, default 5)
  --only=NAME    those figures alone: ${Object.keys(ONLY).join(", ")}
  --backend etcd the etcd3 backend's figures alone (needs etcd and wrk)

See bench/README.md.`;

/** What the arguments ask for; a usage error (exit 2) for anything else, so that a mistyped
 * option does not start the full run. */
export function chosenRun(args: string[]): Rows | "all" {
  let rows: Rows | "all" = "all";
  const choose = (chosen: Rows, arg: string) => {
    if (rows !== "all") usageError(`${arg}: one group of figures at a time`);
    rows = chosen;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--help" || a === "-h") {
      console.log(USAGE);
      Deno.exit(0);
    } else if (a.startsWith("--only=")) {
      const name = a.slice("--only=".length);
      if (!Object.hasOwn(ONLY, name)) usageError(`--only: no figures named "${name}"`);
      choose(ONLY[name], a);
    } else if (a === "--backend" || a.startsWith("--backend=")) {
      const value = a === "--backend" ? args[++i] : a.slice("--backend=".length);
      if (value !== "etcd") usageError(`--backend: only "etcd" (the full run is the file store's)`);
      choose(etcdRows, "--backend");
    } else if (a !== "--quick" && !a.startsWith("--rounds=")) {
      usageError(`unknown argument "${a}"`);
    }
  }
  return rows;
}

function usageError(message: string): never {
  console.error(`bench: ${message}\n\n${USAGE}`);
  Deno.exit(2);
}
