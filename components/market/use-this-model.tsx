import { CodeBlock } from "@/components/docs/code-block";
import { ButtonLink } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";

/** "Use this model": the same call in curl, the OpenAI SDK for Python and for JavaScript, for this model id. */
export function UseThisModel({ model, origin }: { model: string; origin: string }) {
  const base = `${origin}/v1`;
  const curl = `curl ${base}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`;
  const python = `from openai import OpenAI

client = OpenAI(base_url="${base}", api_key=os.environ["SVC_API_KEY"])
reply = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello"}],
)
print(reply.choices[0].message.content)`;
  const js = `import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${base}", apiKey: process.env.SVC_API_KEY });
const reply = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello" }],
});
console.log(reply.choices[0].message.content);`;
  return (
    <Panel
      title="Use this model"
      description="Any OpenAI-compatible client works: point it at svc and name this model. Add X-Svc-Max-Cents to cap the price per diem."
      actions={
        <ButtonLink href="/dashboard/keys" variant="secondary" size="sm">
          Get an API key
        </ButtonLink>
      }
    >
      <div className="flex min-w-0 flex-col gap-4">
        <CodeBlock title="curl" language="sh" code={curl} />
        <CodeBlock title="Python (openai)" language="py" code={`import os\n${python}`} />
        <CodeBlock title="JavaScript (openai)" language="js" code={js} />
      </div>
    </Panel>
  );
}
