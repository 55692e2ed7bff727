/** A row literal's entries one per occurrence, in position order (rowVectors lists each lexeme once). */
export const occurrences = (words: string) =>
  words
    .split(' ')
    .flatMap((entry) => {
      const colon = entry.lastIndexOf(':');
      return entry
        .slice(colon + 1)
        .split(',')
        .map((p) => ({ lexeme: entry.slice(0, colon + 1), p: Number(p) }));
    })
    .sort((a, b) => a.p - b.p)
    .map(({ lexeme, p }) => `${lexeme}${p}`);
