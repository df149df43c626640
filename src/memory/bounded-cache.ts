/**
 * A map of computed values that keeps at most `entries` of them (past it the oldest goes): for values derived
 * from their key alone, read again and again, such as a word's dictionary senses or a stored text's evidence.
 */
export function boundedCache<V>(entries: number): (key: string, compute: () => V) => V {
  const values = new Map<string, V>();
  return (key, compute) => {
    let value = values.get(key);
    if (value === undefined) {
      value = compute();
      if (values.size >= entries) values.delete(values.keys().next().value!);
      values.set(key, value);
    }
    return value;
  };
}
