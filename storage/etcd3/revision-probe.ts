// "What is etcd's revision now?" is asked by every consistent read. The answer is the same
// for everyone who asks at the same moment, so concurrent askers share one linearizable
// round trip. An asker may only share a probe sent after it asked: a probe already on its
// way could have been answered before a write the asker saw acknowledged. So at most one
// probe is in flight and one more waits for it; N concurrent consistent reads cost at most
// two etcd round trips instead of N.

export class RevisionProbe {
  private inFlight: Promise<number> | undefined;
  private queued: Promise<number> | undefined;

  constructor(private readonly readRevision: () => Promise<number>) {}

  current(): Promise<number> {
    if (this.inFlight === undefined) return this.send();
    if (this.queued === undefined) {
      const after = this.inFlight.then(ignore, ignore);
      this.queued = after.then(() => {
        this.queued = undefined;
        return this.send();
      });
    }
    return this.queued;
  }

  private send(): Promise<number> {
    const probe = this.readRevision();
    this.inFlight = probe;
    const done = (): void => {
      if (this.inFlight === probe) this.inFlight = undefined;
    };
    probe.then(done, done);
    return probe;
  }
}

function ignore(): void {}

const probes = new WeakMap<object, RevisionProbe>();
const spaces = new WeakMap<object, Map<string, object>>();

/** What the revisions of the stores of one etcd client under one key prefix are counted in
 *  (read-fence.ts): revisions of one cluster, and keys that conditions on them can name. */
export function revisionSpaceFor(client: object, pathPrefix: string): object {
  let byPrefix = spaces.get(client);
  if (!byPrefix) spaces.set(client, (byPrefix = new Map()));
  let space = byPrefix.get(pathPrefix);
  if (!space) byPrefix.set(pathPrefix, (space = Object.freeze({ pathPrefix })));
  return space;
}

/** one probe per etcd client: the revision is the cluster's, whatever the key prefix */
export function revisionProbeFor(client: object, readRevision: () => Promise<number>): RevisionProbe {
  let probe = probes.get(client);
  if (!probe) {
    probe = new RevisionProbe(readRevision);
    probes.set(client, probe);
  }
  return probe;
}
