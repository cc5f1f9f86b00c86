/**
 * Runs `batch` again and again until one takes fewer than `size` rows (none left, or the last of them):
 * how a worker drains a queue of its own in batches of `size`.
 */
export async function untilShort(size: number, batch: () => Promise<number>): Promise<void> {
  let rows: number;
  do rows = await batch();
  while (rows === size);
}
