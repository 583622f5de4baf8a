import type { ReactNode } from "react";
import { Table, Td, Th } from "@/components/ui/table";

/** A docs table of names (fields, headers) and what each means: the name in mono, its meaning wrapping beside it. */
export function NameTable({ caption, name, rows }: { caption: string; name: string; rows: readonly (readonly [string, ReactNode])[] }) {
  return (
    <Table caption={caption}>
      <thead>
        <tr>
          <Th>{name}</Th>
          <Th>Meaning</Th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([label, meaning]) => (
          <tr key={label} className="align-top">
            <Td className="font-mono text-xs">{label}</Td>
            <Td className="text-xs">
              <div className="min-w-[18rem] whitespace-normal">{meaning}</div>
            </Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
