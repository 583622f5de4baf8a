/** The CLI's local state: per base URL, the session cookie and the last API key it created. Owner-only (0600). */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CliError, EXIT } from "./errors";

export type SavedKey = { id: string; prefix: string; key: string };
export type Profile = { address: string; cookie: string; expiresAt: string; apiKey?: SavedKey };
type StoreFile = { version: 1; profiles: Record<string, Profile> };

export class SessionStore {
  constructor(readonly file: string) {}

  private read(): StoreFile {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return { version: 1, profiles: {} };
    }
    try {
      const parsed = JSON.parse(text) as StoreFile;
      return parsed.version === 1 && parsed.profiles ? parsed : { version: 1, profiles: {} };
    } catch {
      throw new CliError(`${this.file} is not valid JSON; delete it and run login again.`, EXIT.usage, "session_file_corrupt");
    }
  }

  private write(data: StoreFile) {
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    writeFileSync(this.file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(this.file, 0o600);
  }

  get(baseUrl: string): Profile | undefined {
    return this.read().profiles[baseUrl];
  }

  /** The live session for a base URL, or a clear "log in" error. */
  requireSession(baseUrl: string): Profile {
    const profile = this.get(baseUrl);
    if (!profile) throw new CliError(`Not signed in to ${baseUrl}: run \`npm run agent -- login\` first.`, EXIT.auth, "not_signed_in");
    if (new Date(profile.expiresAt).getTime() <= Date.now()) {
      throw new CliError(
        `The session for ${baseUrl} expired at ${profile.expiresAt}: run \`npm run agent -- login\`.`,
        EXIT.auth,
        "session_expired",
      );
    }
    return profile;
  }

  saveSession(baseUrl: string, session: { address: string; cookie: string; expiresAt: string }) {
    const data = this.read();
    const previous = data.profiles[baseUrl];
    // A key belongs to an account: keep it only when the same wallet signs in again.
    const apiKey = previous?.address.toLowerCase() === session.address.toLowerCase() ? previous.apiKey : undefined;
    data.profiles[baseUrl] = { ...session, ...(apiKey ? { apiKey } : {}) };
    this.write(data);
  }

  forgetSession(baseUrl: string) {
    const data = this.read();
    const profile = data.profiles[baseUrl];
    if (!profile) return;
    data.profiles[baseUrl] = { ...profile, cookie: "", expiresAt: new Date(0).toISOString() };
    this.write(data);
  }

  saveApiKey(baseUrl: string, key: SavedKey) {
    const data = this.read();
    const profile = data.profiles[baseUrl];
    if (!profile) return;
    data.profiles[baseUrl] = { ...profile, apiKey: key };
    this.write(data);
  }

  forgetApiKey(baseUrl: string, id: string) {
    const data = this.read();
    const profile = data.profiles[baseUrl];
    if (profile?.apiKey?.id !== id) return;
    const { apiKey: _revoked, ...rest } = profile;
    data.profiles[baseUrl] = rest;
    this.write(data);
  }
}
