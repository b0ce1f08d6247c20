// Types of lib/replicas.js: each grant acknowledged by replicas (Redis's WAIT) before the call resolves.
import type { Cluster, Redis } from 'ioredis';

export interface ReplicasOptions {
  /** The replicas each grant must reach (an integer >= 1; default 1). */
  replicas?: number;
  /** WAIT's timeout in ms (an integer >= 0; 0 waits without a limit, as WAIT does; default 100). */
  timeoutMs?: number;
}

/** An ioredis Redis or Cluster whose writing module calls are each sent with `WAIT replicas timeoutMs` in one
 * round trip; pass it to the package's calls in place of the client. */
export class ReplicaClient {
  constructor(redis: Redis | Cluster, options?: ReplicasOptions);
  readonly redis: Redis | Cluster;
  readonly replicas: number;
  readonly timeoutMs: number;
  call(command: string, ...args: Array<string | number | Buffer>): Promise<unknown>;
}

/** A grant (an admission, a lease acquired or renewed) that fewer than `replicas` replicas acknowledged. */
export class NotReplicatedError extends Error {
  readonly name: 'NotReplicatedError';
  /** The command's raw reply (the grant, as the server answered it). */
  readonly reply: unknown;
  /** The replicas WAIT counted. */
  readonly acked: number;
  /** The replicas asked for. */
  readonly replicas: number;
}

/** redis with grants that survive a failover: each acknowledged by `replicas` replicas, else NotReplicatedError. */
export function withReplicas(redis: Redis | Cluster, options?: ReplicasOptions): ReplicaClient;
