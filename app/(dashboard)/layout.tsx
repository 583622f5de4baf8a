import { SignInGate } from "@/components/wallet/sign-in-gate";

/** Everything under this group needs a signed-in wallet; the gate walks visitors through signing in. */
export default function DashboardGroupLayout({ children }: { children: React.ReactNode }) {
  return (
    <main className="mx-auto w-full max-w-6xl px-4 py-6 sm:px-6 sm:py-10">
      <SignInGate>{children}</SignInGate>
    </main>
  );
}
