/** `http://user:pw@host/` → `http://***@host/`, in any text: a receiver's credentials are not shown. */
export function withoutUserInfo(text: string): string {
  return text.replace(/\/\/[^/@\s"]*@/g, '//***@');
}
