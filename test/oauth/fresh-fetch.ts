/**
 * `fetch` for tests that restart a server on the same port: Node's fetch keeps idle keep-alive sockets to
 * the old process and only notices they were closed when it next writes to one ("other side closed",
 * before the request reached any server). Such a request is sent once more, on a new socket.
 */
export async function freshFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code !== 'UND_ERR_SOCKET') throw error;
    return fetch(input, init);
  }
}
