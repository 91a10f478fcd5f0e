#!/usr/bin/env python3
"""The template as `sam deploy` would deploy it, resolved for a local stack.

    resolve.py TEMPLATE LOCAL_STACK_JSON  ->  the resolved CloudFormation template on stdout

1. The SAM transform, with aws-sam-translator (the library `sam deploy` and CloudFormation's
   own AWS::Serverless transform use). Each function's CodeUri is replaced by an S3 location
   first, as `sam package` does.
2. CloudFormation's part: parameters (template defaults, then the local values), conditions,
   and every intrinsic function (Ref, Fn::GetAtt, Fn::Sub, Fn::If, Fn::Join, Fn::Select,
   Fn::Split, Fn::Equals, Fn::Not, Fn::And, Fn::Or, Condition, AWS::NoValue), with each
   resource's physical id and attributes taken from the local stack (queues, secrets) or made
   up the way CloudFormation names them (functions, roles, versions, the API, buckets, rules).

LOCAL_STACK_JSON: {"region", "accountId", "stackName", "parameters": {...},
                   "resources": {LogicalId: {"Ref": ..., "Arn": ..., other attributes}}}
"""
import datetime
import json
import sys

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

NO_VALUE = object()


class ManagedPolicies:
    """SAM asks for the account's managed policies only to resolve policy names; ours are ARNs."""

    def load(self):
        return {}


def fail(message):
    print(f"resolve.py: {message}", file=sys.stderr)
    sys.exit(2)


class Resolver:
    def __init__(self, template, local):
        self.template = template
        self.region = local["region"]
        self.account = local["accountId"]
        self.stack = local["stackName"]
        self.local = local.get("resources", {})
        self.parameters = {}
        for name, spec in template.get("Parameters", {}).items():
            value = local["parameters"].get(name, spec.get("Default"))
            if value is None:
                fail(f"parameter {name} has no default and no local value")
            if spec.get("Type", "").startswith("List<") or spec.get("Type") == "CommaDelimitedList":
                value = value if isinstance(value, list) else [v.strip() for v in str(value).split(",")]
            elif not isinstance(value, str):
                value = str(value)
            self.parameters[name] = value
        self.conditions = {}
        for name in template.get("Conditions", {}):
            self.conditions[name] = self.condition(name)

    def condition(self, name):
        if name not in self.conditions:
            self.conditions[name] = bool(self.value(self.template["Conditions"][name]))
        return self.conditions[name]

    def pseudo(self, name):
        return {
            "AWS::Region": self.region,
            "AWS::AccountId": self.account,
            "AWS::StackName": self.stack,
            "AWS::StackId": f"arn:aws:cloudformation:{self.region}:{self.account}:stack/{self.stack}/rehearsal",
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::NoValue": NO_VALUE,
        }.get(name)

    def physical(self, logical):
        resource = self.template["Resources"].get(logical)
        if resource is None:
            fail(f"no resource {logical}")
        local = self.local.get(logical, {})
        kind = resource["Type"]
        name = f"{self.stack}-{logical}"[:64]
        made_up = {
            "AWS::Lambda::Function": lambda: {
                "Ref": name,
                "Arn": f"arn:aws:lambda:{self.region}:{self.account}:function:{name}",
            },
            "AWS::IAM::Role": lambda: {"Ref": name, "Arn": f"arn:aws:iam::{self.account}:role/{name}"},
            "AWS::Lambda::Version": lambda: {
                "Ref": f"arn:aws:lambda:{self.region}:{self.account}:function:{self.stack}-{logical}:1",
                "Version": "1",
            },
            "AWS::ApiGatewayV2::Api": lambda: {"Ref": "rehearsalapi", "ApiEndpoint": "http://127.0.0.1"},
            # Bucket names are lowercase; the ARN has no region or account.
            "AWS::S3::Bucket": lambda: {
                "Ref": name.lower()[:63],
                "Arn": f"arn:aws:s3:::{name.lower()[:63]}",
                "DomainName": f"{name.lower()[:63]}.s3.amazonaws.com",
            },
            "AWS::Events::Rule": lambda: {
                "Ref": name,
                "Arn": f"arn:aws:events:{self.region}:{self.account}:rule/{name}",
            },
            "AWS::Logs::LogGroup": lambda: {
                "Ref": name,
                "Arn": f"arn:aws:logs:{self.region}:{self.account}:log-group:{name}:*",
            },
        }.get(kind, lambda: {"Ref": name, "Arn": f"arn:aws:rehearsal:{self.region}:{self.account}:{logical}"})()
        made_up.update(local)
        return made_up

    def ref(self, name):
        if name in self.parameters:
            return self.parameters[name]
        pseudo = self.pseudo(name)
        if pseudo is not None:
            return pseudo
        return self.physical(name)["Ref"]

    def get_att(self, logical, attribute):
        attributes = self.physical(logical)
        if attribute not in attributes:
            fail(f"no attribute {attribute} of {logical} in the local stack")
        return attributes[attribute]

    def sub(self, text, variables):
        out, i = "", 0
        while i < len(text):
            start = text.find("${", i)
            if start < 0:
                out += text[i:]
                break
            out += text[i:start]
            end = text.index("}", start)
            name = text[start + 2 : end]
            if name.startswith("!"):
                out += "${" + name[1:] + "}"
            elif name in variables:
                out += str(variables[name])
            elif "." in name and name.split(".", 1)[0] in self.template["Resources"]:
                out += str(self.get_att(*name.split(".", 1)))
            else:
                out += str(self.ref(name))
            i = end + 1
        return out

    def value(self, node):
        if isinstance(node, list):
            items = [self.value(v) for v in node]
            return [v for v in items if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            (key, arg), = node.items()
            if key == "Ref":
                return self.ref(arg)
            if key == "Fn::GetAtt":
                logical, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
                return self.get_att(logical, attribute)
            if key == "Fn::Sub":
                if isinstance(arg, list):
                    return self.sub(arg[0], {k: self.value(v) for k, v in arg[1].items()})
                return self.sub(arg, {})
            if key == "Fn::If":
                name, yes, no = arg
                return self.value(yes if self.condition(name) else no)
            if key == "Fn::Join":
                return arg[0].join(str(v) for v in self.value(arg[1]))
            if key == "Fn::Select":
                return self.value(arg[1])[int(self.value(arg[0]))]
            if key == "Fn::Split":
                return str(self.value(arg[1])).split(arg[0])
            if key == "Fn::Equals":
                return as_text(self.value(arg[0])) == as_text(self.value(arg[1]))
            if key == "Fn::Not":
                return not self.value(arg[0])
            if key == "Fn::And":
                return all(self.value(v) for v in arg)
            if key == "Fn::Or":
                return any(self.value(v) for v in arg)
            if key == "Condition":
                return self.condition(arg)
            if key.startswith("Fn::"):
                fail(f"unsupported intrinsic function {key}")
        out = {}
        for key, child in node.items():
            resolved = self.value(child)
            if resolved is not NO_VALUE:
                out[key] = resolved
        return out

    def resolve(self):
        resources = {}
        for logical, resource in self.template["Resources"].items():
            if "Condition" in resource and not self.condition(resource["Condition"]):
                continue
            resolved = dict(resource)
            resolved["Properties"] = self.value(resource.get("Properties", {}))
            physical = self.physical(logical)
            resolved["PhysicalId"] = physical["Ref"]
            # Its ARN, as Fn::GetAtt gives it (what event source mappings and policies name).
            if "Arn" in physical:
                resolved["Arn"] = physical["Arn"]
            resources[logical] = resolved
        return {"Parameters": self.parameters, "Conditions": self.conditions, "Resources": resources}


def as_text(value):
    """A scalar as CloudFormation compares it: parameters are strings, so `[Ref: N, 0]` is equal
    when N is "0"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value


def dates_as_text(node):
    """An unquoted `2010-09-09` loads as a date; CloudFormation reads it as text."""
    if isinstance(node, dict):
        return {k: dates_as_text(v) for k, v in node.items()}
    if isinstance(node, list):
        return [dates_as_text(v) for v in node]
    if isinstance(node, datetime.date):
        return node.isoformat()
    return node


def main():
    if len(sys.argv) != 3:
        fail("usage: resolve.py TEMPLATE LOCAL_STACK_JSON")
    with open(sys.argv[1]) as f:
        template = dates_as_text(yaml_parse(f.read()))
    with open(sys.argv[2]) as f:
        local = json.load(f)
    for name, resource in template.get("Resources", {}).items():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource.setdefault("Properties", {})["CodeUri"] = f"s3://rehearsal-artifacts/{name}.zip"
    transformed = transform(template, local["parameters"], ManagedPolicies())
    json.dump(Resolver(transformed, local).resolve(), sys.stdout, indent=1, default=str)


if __name__ == "__main__":
    main()
