// Counted nouns in messages people and agents read: "1 second", "2 seconds".

/** `count` with `noun` in the singular or plural (`plural` when it is not `noun` + "s"). */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}
