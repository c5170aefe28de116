"""moto's server, with the Lambda functions it invokes run by this Python instead of in Docker.

CloudFormation in moto invokes a custom resource's function (the stack's bucket-notification handler, Python) in a
Docker container, which these machines cannot run. This launcher replaces that one step: a Python function's code
(its deployment package, as moto holds it) is unpacked and its handler called in a child process of this Python,
whose boto3 reaches this server (AWS_ENDPOINT_URL), with the function's environment and a context object. Functions
of other runtimes are refused. The response URL given to custom resources points at this server on 127.0.0.1.

Where moto's event differs from CloudFormation's, the event is made as CloudFormation sends it: CloudFormation
passes every scalar of a custom resource's properties as a string (a template's `true` arrives as "true"), which
handlers rely on (CDK's bucket-notification handler calls `.lower()` on `Managed`).

Usage: python moto-lambda-python.py -H 127.0.0.1 -p <port>   (MOTO_PORT=<port> in the environment)
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import uuid
import zipfile

from moto import settings
from moto.apigatewayv2.models import apigatewayv2_backends
from moto.athena.models import athena_backends
from moto.awslambda import models
from moto.cloudwatch.models import cloudwatch_backends
from moto.core.common_models import CloudFormationModel
from moto.dynamodb.models.table import Table
from moto.firehose.models import firehose_backends
from moto.glue.models import glue_backends
from moto.iam.access_control import PermissionResult
from moto.s3.models import FakeBucket, s3_backends
from moto.server import main
from moto.sns.models import sns_backends
from moto.sqs.models import sqs_backends


def as_cloudformation_sends(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return [as_cloudformation_sends(v) for v in value]
    if isinstance(value, dict):
        return {k: as_cloudformation_sends(v) for k, v in value.items()}
    return value


CONTEXT = """
class Context:
    def __init__(self, name, timeout):
        import time, uuid
        self.function_name = name
        self.function_version = "$LATEST"
        self.invoked_function_arn = name
        self.memory_limit_in_mb = 128
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = "/aws/lambda/" + name
        self.log_stream_name = "local/" + self.aws_request_id
        self._deadline = time.time() + timeout
    def get_remaining_time_in_millis(self):
        import time
        return max(0, int((self._deadline - time.time()) * 1000))
"""


def invoke_without_docker(self, event=None):
    if not str(self.run_time).startswith("python"):
        return f"runtime {self.run_time} is not run by this launcher", True, ""
    endpoint = f"http://127.0.0.1:{settings.moto_server_port()}"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "AWS_ACCESS_KEY_ID": "moto",
        "AWS_SECRET_ACCESS_KEY": "moto",
        "AWS_REGION": self.region,
        "AWS_DEFAULT_REGION": self.region,
        "AWS_LAMBDA_FUNCTION_NAME": self.function_name,
        **self.environment_vars,
        "AWS_ENDPOINT_URL": endpoint,
    }
    if isinstance(event, dict) and "RequestType" in event and "ResourceProperties" in event:
        event = {**event, "ResourceProperties": as_cloudformation_sends(event["ResourceProperties"])}
    module, function = self.handler.rsplit(".", 1)
    timeout = int(self.timeout or 3)
    call = (
        f"import json, sys, {module}\n{CONTEXT}\n"
        f"print(json.dumps({module}.{function}(json.loads(sys.stdin.read()), Context({self.function_name!r}, {timeout}))))"
    )
    with tempfile.TemporaryDirectory() as code:
        zipfile.ZipFile(io.BytesIO(self.code_bytes)).extractall(code)
        done = subprocess.run(
            [sys.executable, "-c", call], input=json.dumps(event), cwd=code, env=env,
            capture_output=True, text=True, timeout=timeout,
        )
    sys.stderr.write(done.stderr)
    return done.stdout, done.returncode != 0, done.stderr


class Created:
    """A resource created through a service of moto: its physical id (what `Ref` gives) and attributes."""

    def __init__(self, physical_id, attributes=None):
        self.physical_resource_id = physical_id
        self.attributes = attributes or {}

    def get_cfn_attribute(self, attribute_name):
        return self.attributes.get(attribute_name)


def handler(type_name, name_property=""):
    """Registers `create(properties, account, region, name) -> Created` as moto's model of `type_name`."""

    def register(create):
        def create_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
            return create(cloudformation_json.get("Properties", {}), account_id, region_name, resource_name)

        # A direct subclass (moto finds its models by CloudFormationModel.__subclasses__()), in a module of moto's
        # (its model classes name their service by their module).
        return type(type_name.replace("::", ""), (CloudFormationModel,), {
            "__module__": "moto.cloudformation.launcher",
            "cloudformation_type": staticmethod(lambda: type_name),
            "cloudformation_name_type": staticmethod(lambda: name_property),
            "has_cfn_attr": classmethod(lambda cls, attr: True),
            "create_from_cloudformation_json": classmethod(create_from_cloudformation_json),
        })

    return register


def dumps(document):
    return document if isinstance(document, str) else json.dumps(document)


@handler("AWS::Glue::Database")
def glue_database(p, account, region, name):
    database = p["DatabaseInput"]
    glue_backends[account][region].create_database(database["Name"], database)
    return Created(database["Name"])


@handler("AWS::Glue::Table")
def glue_table(p, account, region, name):
    table = p["TableInput"]
    glue_backends[account][region].create_table(p["DatabaseName"], table["Name"], table)
    return Created(table["Name"])


@handler("AWS::Athena::WorkGroup", "Name")
def athena_workgroup(p, account, region, name):
    athena_backends[account][region].create_work_group(p.get("Name", name), p.get("WorkGroupConfiguration", {}), p.get("Description", ""), p.get("Tags", []))
    return Created(p.get("Name", name))


@handler("AWS::CloudWatch::Alarm", "AlarmName")
def cloudwatch_alarm(p, account, region, name):
    alarm = p.get("AlarmName", name)
    cloudwatch_backends[account][region].put_metric_alarm(
        name=alarm, namespace=p.get("Namespace"), metric_name=p.get("MetricName"),
        comparison_operator=p["ComparisonOperator"], evaluation_periods=int(p["EvaluationPeriods"]),
        period=int(p["Period"]) if "Period" in p else None, threshold=float(p["Threshold"]), statistic=p.get("Statistic"),
        description=p.get("AlarmDescription"), dimensions=p.get("Dimensions", []), alarm_actions=p.get("AlarmActions", []),
        ok_actions=p.get("OKActions", []), treat_missing_data=p.get("TreatMissingData"),
    )
    return Created(alarm, {"Arn": f"arn:aws:cloudwatch:{region}:{account}:alarm:{alarm}"})


@handler("AWS::S3::BucketPolicy")
def bucket_policy(p, account, region, name):
    s3_backends[account]["aws"].put_bucket_policy(p["Bucket"], dumps(p["PolicyDocument"]).encode())
    return Created(str(uuid.uuid4()))


@handler("AWS::SQS::QueuePolicy")
def queue_policy(p, account, region, name):
    for url in p["Queues"]:
        sqs_backends[account][region].set_queue_attributes(url.rstrip("/").split("/")[-1], {"Policy": dumps(p["PolicyDocument"])})
    return Created(str(uuid.uuid4()))


@handler("AWS::SNS::TopicPolicy")
def topic_policy(p, account, region, name):
    for arn in p["Topics"]:
        sns_backends[account][region].set_topic_attribute(arn, "Policy", dumps(p["PolicyDocument"]))
    return Created(str(uuid.uuid4()))


@handler("AWS::KinesisFirehose::DeliveryStream", "DeliveryStreamName")
def delivery_stream(p, account, region, name):
    stream = p.get("DeliveryStreamName", name)
    arn = firehose_backends[account][region].create_delivery_stream(
        region, stream, p.get("DeliveryStreamType", "DirectPut"), None,
        p.get("DeliveryStreamEncryptionConfigurationInput"), None, p.get("ExtendedS3DestinationConfiguration"),
        None, None, None, None, None, None, [],
    )
    return Created(stream, {"Arn": arn})


@handler("AWS::ApiGatewayV2::Api", "Name")
def http_api(p, account, region, name):
    api = apigatewayv2_backends[account][region].create_api(
        api_key_selection_expression=None, cors_configuration=p.get("CorsConfiguration"), description=p.get("Description"),
        disable_schema_validation=None, disable_execute_api_endpoint=p.get("DisableExecuteApiEndpoint"), name=p["Name"],
        protocol_type=p["ProtocolType"], route_selection_expression=None, tags=p.get("Tags", {}), version=None,
    )
    return Created(api.api_id, {"ApiEndpoint": api.api_endpoint, "ApiId": api.api_id})


@handler("AWS::ApiGatewayV2::Integration")
def http_api_integration(p, account, region, name):
    integration = apigatewayv2_backends[account][region].create_integration(
        api_id=p["ApiId"], connection_id=None, connection_type=None, content_handling_strategy=None, credentials_arn=None,
        description=None, integration_method=p.get("IntegrationMethod"), integration_subtype=None,
        integration_type=p["IntegrationType"], integration_uri=p.get("IntegrationUri"), passthrough_behavior=None,
        payload_format_version=p.get("PayloadFormatVersion"), request_parameters=None, request_templates=None,
        response_parameters=None, template_selection_expression=None, timeout_in_millis=None, tls_config=None,
    )
    return Created(integration.id)


@handler("AWS::ApiGatewayV2::Route")
def http_api_route(p, account, region, name):
    route = apigatewayv2_backends[account][region].create_route(
        api_id=p["ApiId"], api_key_required=False, authorization_scopes=[], authorization_type=p.get("AuthorizationType"),
        authorizer_id=None, model_selection_expression=None, operation_name=None, request_models=None,
        request_parameters=None, route_key=p["RouteKey"], route_response_selection_expression=None, target=p.get("Target"),
    )
    return Created(route.route_id)


@handler("AWS::ApiGatewayV2::Stage")
def http_api_stage(p, account, region, name):
    config = {"stageName": p["StageName"], "autoDeploy": p.get("AutoDeploy", False)}
    if "DefaultRouteSettings" in p:
        config["defaultRouteSettings"] = {k[0].lower() + k[1:]: v for k, v in p["DefaultRouteSettings"].items()}
    if "AccessLogSettings" in p:
        config["accessLogSettings"] = {k[0].lower() + k[1:]: v for k, v in p["AccessLogSettings"].items()}
    apigatewayv2_backends[account][region].create_stage(p["ApiId"], config)
    return Created(p["StageName"])


def applying_after(model, apply):
    create = model.create_from_cloudformation_json.__func__

    def create_and_apply(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
        resource = create(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        apply(resource, cloudformation_json.get("Properties", {}))
        return resource

    model.create_from_cloudformation_json = classmethod(create_and_apply)


def function_architectures(function, p):
    if "Architectures" in p:
        function.architectures = p["Architectures"]


def table_time_to_live(table, p):
    ttl = p.get("TimeToLiveSpecification")
    if ttl and str(ttl.get("Enabled")).lower() == "true":
        table.ttl = {"TimeToLiveStatus": "ENABLED", "AttributeName": ttl["AttributeName"]}


FakeBucket.get_permission = lambda self, action, resource: PermissionResult.NEUTRAL
applying_after(models.LambdaFunction, function_architectures)
applying_after(Table, table_time_to_live)
models.LambdaFunction._invoke_lambda = invoke_without_docker
settings.moto_server_host = lambda: "http://127.0.0.1"

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
