// validate.mjs YAML... — checks cordon's pod files offline against the Kubernetes API's OpenAPI
// schema as the npm package kubernetes-models (pinned in package.json) carries it: a Pod is
// validated as a Pod, a SandboxTemplate's podTemplate.spec as a PodSpec (and must equal
// cordon-pod.yaml's spec). Then what docs/fleet.md promises of every pod spec: hostUsers false,
// procMount Unmasked on the container `cordon`, no capability added, the Localhost seccomp
// profile seccomp-cordon.json, requests and limits on every container.
// Run by spec/04-engine/pod_podman_spec.lua from a copy beside a link to the installed node_modules
// (build-deps/k8s-schema, `make deps`), where its imports resolve. One line per file: "ok FILE"
// or "FILE: why"; exit 1 when one is not valid.
import fs from "node:fs";
import path from "node:path";
import util from "node:util";
import yaml from "js-yaml";
import { Pod } from "kubernetes-models/v1/Pod";
import { validate as validatePodSpec } from "kubernetes-models/_schemas/IoK8sApiCoreV1PodSpec";

function promises(spec) {
    const why = [];
    if (spec.hostUsers !== false) why.push("hostUsers is not false");
    const seccomp = spec.securityContext && spec.securityContext.seccompProfile;
    if (!seccomp || seccomp.type !== "Localhost" || seccomp.localhostProfile !== "seccomp-cordon.json")
        why.push("the pod's seccomp profile is not Localhost seccomp-cordon.json");
    for (const c of spec.containers || []) {
        const sc = c.securityContext || {};
        if (sc.privileged) why.push(`${c.name} is privileged`);
        if (sc.capabilities && sc.capabilities.add && sc.capabilities.add.length)
            why.push(`${c.name} adds capabilities`);
        if (c.name === "cordon" && sc.procMount !== "Unmasked") why.push("cordon's procMount is not Unmasked");
        const r = c.resources || {};
        if (!r.requests || !r.limits) why.push(`${c.name} has no requests and limits`);
    }
    return why;
}

function check(file, reference) {
    const doc = yaml.load(fs.readFileSync(file, "utf8"));
    let spec;
    if (doc.kind === "Pod") {
        new Pod(doc).validate();
        spec = doc.spec;
    } else if (doc.kind === "SandboxTemplate") {
        if (doc.apiVersion !== "extensions.agents.x-k8s.io/v1alpha1") throw new Error("unexpected apiVersion " + doc.apiVersion);
        spec = doc.spec && doc.spec.podTemplate && doc.spec.podTemplate.spec;
        if (!spec) throw new Error("no spec.podTemplate.spec");
        if (!validatePodSpec(spec))
            throw new Error(validatePodSpec.errors.map((e) => `spec.podTemplate.spec${e.instancePath}: ${e.message || e.keyword + " " + JSON.stringify(e.params)}`).join("; "));
        if (reference && !util.isDeepStrictEqual(spec, reference)) throw new Error("its pod spec differs from cordon-pod.yaml's");
    } else {
        throw new Error("unexpected kind " + doc.kind);
    }
    const why = promises(spec);
    if (why.length) throw new Error(why.join("; "));
}

let failed = false;
const files = process.argv.slice(2);
const refFile = files.find((f) => path.basename(f) === "cordon-pod.yaml");
const reference = refFile ? yaml.load(fs.readFileSync(refFile, "utf8")).spec : null;
for (const file of files) {
    try {
        check(file, reference);
        console.log("ok " + file);
    } catch (e) {
        failed = true;
        console.log(`${file}: ${e.message}`);
    }
}
process.exit(failed ? 1 : 0);
