"""Runs the SAM translator (aws-sam-translator, what CloudFormation's AWS::Serverless transform runs)
on template.yaml and reports what a deploy would do to the "live" aliases. Used by TemplateDeployIT.

    python3 sam_deploy_check.py TEMPLATE BASE_PARAMETERS_JSON OUTPUT_JSON INFRA_TEMPLATE

For the base parameters, the same again, every parameter changed one at a time, and another code
artifact, it records each alias's *version identity*: the logical id of the AWS::Lambda::Version it
points at, plus the version's create-only properties with parameters resolved. CloudFormation
publishes a new version (and moves the alias) exactly when that identity changes: a new logical id
is a new resource, a changed create-only property replaces the resource. A resource the version's
Description names (ConfigSnapshot) is expanded into its own create-only properties, since replacing
it gives it new attribute values.

It also reports what would keep `sam build` from building and pointing at the functions' code,
which parameters reach the functions (referenced from Globals.Function or a
function's properties other than Events), which HTTP routes `sam deploy --guided` would ask about
("has no authentication. Is this okay?", the check of samcli/commands/deploy/auth_utils.py), and
whether the dashboard body is valid JSON once substituted, and whether infra.yaml's ParameterOverrides
output names only template.yaml parameters and every one that has no default.
"""
import copy
import json
import os
import re
import sys

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

from samtranslator.intrinsics.resolver import IntrinsicsResolver  # noqa: E402
from samtranslator.translator.transform import transform  # noqa: E402
from samtranslator.yaml_helper import yaml_parse  # noqa: E402

CODE_URI = "s3://runner-artifacts/0123456789abcdef0123456789abcdef"
OTHER_CODE_URI = "s3://runner-artifacts/fedcba9876543210fedcba9876543210"

# Properties that can only be set by creating the resource (CloudFormation resource schemas'
# createOnlyProperties), for the types a version's Description may name.
CREATE_ONLY = {
    "AWS::Lambda::Version": ["FunctionName", "Description", "CodeSha256", "ProvisionedConcurrencyConfig", "RuntimePolicy"],
    "AWS::AppConfig::HostedConfigurationVersion": [
        "ApplicationId", "ConfigurationProfileId", "Description", "Content", "ContentType", "LatestVersionNumber", "VersionLabel"],
}
REFERENCE = re.compile(r"\$\{([A-Za-z0-9]+)\.[A-Za-z0-9.]+\}")


class NoManagedPolicies:
    """The translator asks IAM for managed policy ARNs only for policies given by name; there are none."""

    def load(self):
        return {}


def references(value):
    """Parameter names a value refers to, through Ref or ${Name} in Fn::Sub."""
    found = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                found.add(inner)
            elif key == "Fn::Sub":
                text = inner if isinstance(inner, str) else inner[0]
                found.update(re.findall(r"\$\{([A-Za-z0-9]+)\}", text))
                if isinstance(inner, list):
                    found.update(references(inner[1]))
            else:
                found.update(references(inner))
    elif isinstance(value, list):
        for inner in value:
            found.update(references(inner))
    return found


# Function properties that are the function's, not a version's: Lambda applies a change to every
# version at once, so a change needs no new version (reserved concurrency caps the function).
UNVERSIONED = {"Events", "ReservedConcurrentExecutions"}


def function_parameters(template):
    parameters = set(template.get("Parameters", {}))
    used = references(template.get("Globals", {}).get("Function", {}))
    for resource in template["Resources"].values():
        if resource.get("Type") == "AWS::Serverless::Function":
            properties = {k: v for k, v in resource.get("Properties", {}).items() if k not in UNVERSIONED}
            used.update(references(properties))
    return sorted(used & parameters)


def changed_value(name, declaration, current):
    """A valid value of the parameter other than the current one."""
    allowed = declaration.get("AllowedValues")
    if allowed:
        return next(str(v) for v in allowed if str(v) != str(current))
    kind = declaration.get("Type", "String")
    if kind.startswith("List<") or kind == "CommaDelimitedList":
        return current + ["changed-" + name.lower()]
    if kind == "Number":
        return str(int(float(current)) + 1)
    return (current or name.lower()) + "-changed"


def identities(template, parameters, code_uri):
    sam = with_code_uri(template, code_uri)
    output = transform(sam, copy.deepcopy(parameters), NoManagedPolicies())
    values = dict(parameters)
    for name, declaration in template.get("Parameters", {}).items():
        default = declaration.get("Default")
        values.setdefault(name, default if isinstance(default, list) or default is None else str(default))
    values.update({"AWS::Region": "us-east-1", "AWS::AccountId": "123456789012", "AWS::Partition": "aws",
                   "AWS::StackName": "runner", "AWS::URLSuffix": "amazonaws.com"})
    resources = IntrinsicsResolver(values).resolve_parameter_refs(output["Resources"])

    def create_only(logical_id):
        resource = resources[logical_id]
        kind = resource["Type"]
        if kind not in CREATE_ONLY:
            raise SystemExit(f"{logical_id} ({kind}) is named by a version; add its create-only properties to CREATE_ONLY")
        return {k: v for k, v in resource.get("Properties", {}).items() if k in CREATE_ONLY[kind]}

    def version_identity(version):
        properties = create_only(version)
        named = sorted(set(REFERENCE.findall(json.dumps(properties.get("Description")))))
        return {"version": version, "properties": properties, "named": {name: create_only(name) for name in named}}

    result = {}
    for logical_id, resource in resources.items():
        if resource["Type"] == "AWS::Lambda::Alias" and resource["Properties"]["Name"] == "live":
            version = resource["Properties"]["FunctionVersion"]["Fn::GetAtt"][0]
            result[logical_id] = json.dumps(version_identity(version), sort_keys=True)
    return result


def with_code_uri(template, code_uri):
    """The template as `sam deploy` hands it to CloudFormation: each function's CodeUri uploaded."""
    sam = copy.deepcopy(template)
    for resource in sam["Resources"].values():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = code_uri
    return sam


def sam_build_problems(template, template_dir):
    """What would keep `sam build && sam deploy` from deploying the functions' code (SAM CLI's rules,
    samcli/lib/build/app_builder.py). sam build builds every AWS::Serverless::Function whose CodeUri
    (Globals applied) is a local folder, with the builder its Metadata BuildMethod names (makefile:
    `make build-<LogicalId>` with the folder's Makefile), and points that function's own CodeUri at
    the build; Globals it copies as they are into .aws-sam/build/template.yaml, where a relative
    path names nothing. A .zip file is not built, and SAM's Maven builder would build a copy of the
    folder without the parent pom."""
    problems = []
    if "CodeUri" in template.get("Globals", {}).get("Function", {}):
        problems.append("Globals.Function.CodeUri: sam build rewrites CodeUri on the functions, never in Globals")
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        code_uri = resource.get("Properties", {}).get("CodeUri")
        folder = os.path.join(template_dir, code_uri) if isinstance(code_uri, str) else None
        if folder is None or code_uri.startswith("s3://") or not os.path.isdir(folder):
            problems.append(f"{logical_id}: CodeUri {code_uri!r} is not a local folder that sam build builds")
        elif resource.get("Metadata", {}).get("BuildMethod") != "makefile":
            problems.append(f"{logical_id}: no Metadata BuildMethod makefile")
        elif not os.path.isfile(os.path.join(folder, "Makefile")):
            problems.append(f"{logical_id}: no Makefile in {code_uri}")
    return problems


def guided_auth_prompts(template):
    """Functions whose HttpApi/Api events SAM CLI's guided deploy would call unauthenticated."""
    resources = template["Resources"]
    prompted = []
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in resource.get("Properties", {}).get("Events", {}).values():
            identifier = {"Api": "RestApiId", "HttpApi": "ApiId"}.get(event.get("Type"))
            if identifier is None:
                continue
            properties = event.get("Properties", {})
            api = properties.get(identifier)
            api_name = api.get("Ref") if isinstance(api, dict) else api
            api_auth = resources.get(api_name, {}).get("Properties", {}).get("Auth")
            if not properties.get("Auth") and not api_auth:
                prompted.append(logical_id)
    return sorted(set(prompted))


def dashboard_errors(template):
    errors = []
    for logical_id, resource in template["Resources"].items():
        if resource.get("Type") == "AWS::CloudWatch::Dashboard":
            body = resource["Properties"]["DashboardBody"]
            text = body["Fn::Sub"] if isinstance(body, dict) else body
            try:
                json.loads(re.sub(r"\$\{[^}]+\}", "1", text))
            except ValueError as e:
                errors.append(f"{logical_id}: {e}")
    return errors


def infra_overrides(template, infra_path):
    """infra.yaml's ParameterOverrides output against template.yaml's parameters."""
    with open(infra_path) as f:
        infra = yaml_parse(f.read())
    value = infra["Outputs"]["ParameterOverrides"]["Value"]["Fn::Sub"]
    text = value[0] if isinstance(value, list) else value
    given = dict(re.findall(r"(?:^|\s)([A-Za-z0-9]+)=(\S*)", text))
    declared = template.get("Parameters", {})
    required = {name for name, declaration in declared.items() if "Default" not in declaration}
    return {"unknown": sorted(set(given) - set(declared)), "missing": sorted(required - set(given)), "given": given}


def main(template_path, base_json, output_path, infra_path):
    with open(template_path) as f:
        template = yaml_parse(f.read())
    base = json.loads(base_json)
    declared = template.get("Parameters", {})
    result = {
        "functionParameters": function_parameters(template),
        "baseline": identities(template, base, CODE_URI),
        "baselineAgain": identities(template, base, CODE_URI),
        "otherCode": identities(template, base, OTHER_CODE_URI),
        "variants": {},
        "samBuildProblems": sam_build_problems(template, os.path.dirname(os.path.abspath(template_path))),
        "guidedAuthPrompts": guided_auth_prompts(template),
        "dashboardErrors": dashboard_errors(template),
        "infraOverrides": infra_overrides(template, infra_path),
    }
    for name, declaration in declared.items():
        current = base.get(name, declaration.get("Default"))
        variant = dict(base)
        variant[name] = changed_value(name, declaration, current)
        result["variants"][name] = identities(template, variant, CODE_URI)
    with open(output_path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(*sys.argv[1:5])
