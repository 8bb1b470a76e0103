"""Prints, as JSON, the IAM role SAM's translator makes for each function of a template.

Usage: python3 sam_roles.py TEMPLATE [Name=Value ...]
Output: {"roles": {"FunctionLogicalId": {"Policies": [...], "ManagedPolicyArns": [...]}, ...},
         "managedPolicies": {"PolicyLogicalId": PolicyDocument, ...} (the template's own AWS::IAM::ManagedPolicy),
         "templates": {policy template name: definition, ...}}, intrinsics left as CloudFormation
would receive them. Exit 3 when the translator is not installed.
"""
import json
import os
import sys

try:
    from samtranslator.policy_template_processor.processor import PolicyTemplatesProcessor
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse
except ImportError as e:
    print("samtranslator is not installed: %s" % e, file=sys.stderr)
    sys.exit(3)


class NoManagedPolicies:
    """The translator asks IAM for managed policy ARNs only for policies named without an ARN; none are."""

    def load(self):
        return {}


def main():
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    with open(sys.argv[1]) as f:
        template = yaml_parse(f.read())
    # CodeUri names a local folder; the translator wants an S3 location, which changes nothing of the roles.
    for resource in template["Resources"].values():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource.setdefault("Properties", {})["CodeUri"] = "s3://bucket/code.zip"
    parameters = dict(arg.split("=", 1) for arg in sys.argv[2:])
    resources = transform(template, parameters, NoManagedPolicies())["Resources"]
    roles = {}
    for logical_id, resource in resources.items():
        if resource["Type"] == "AWS::Lambda::Function":
            role = resource["Properties"]["Role"]["Fn::GetAtt"][0]
            properties = resources[role]["Properties"]
            roles[logical_id] = {"Policies": properties.get("Policies", []),
                                 "ManagedPolicyArns": properties.get("ManagedPolicyArns", [])}
    managed = {logical_id: resource["Properties"]["PolicyDocument"]
               for logical_id, resource in resources.items() if resource["Type"] == "AWS::IAM::ManagedPolicy"}
    templates = PolicyTemplatesProcessor.get_default_policy_templates_json()["Templates"]
    print(json.dumps({"roles": roles, "managedPolicies": managed, "templates": templates}))


main()
