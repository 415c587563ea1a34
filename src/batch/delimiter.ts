/** Which of comma, semicolon and tab separates the header's fields (outside quotes). */
export type Delimiter = ',' | ';' | '\t';

export function detectDelimiter(firstLine: string): Delimiter {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const char of firstLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === ',' || char === ';' || char === '\t')) counts[char] += 1;
  }
  const best = (Object.entries(counts) as [Delimiter, number][]).sort((a, b) => b[1] - a[1])[0] as [Delimiter, number];
  return best[1] === 0 ? ',' : best[0];
}
