/** A set that forgets its oldest ids past `capacity`, so that a listen running for days stays small. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.add(id);
    // A Set iterates in insertion order: the first id is the oldest.
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value as string);
  }
}
