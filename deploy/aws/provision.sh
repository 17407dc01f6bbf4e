#!/usr/bin/env bash
# Provisions a Juno cluster on EC2: N node instances and one coordinator, with the systemd units of
# deploy/systemd installed by user-data (Temurin 25 from Adoptium's apt repository, the packaged apps from
# a tarball this script uploads to S3). See docs/deploy.md.
#
# Usage: deploy/aws/provision.sh --nodes N --bucket BUCKET --model-url URL --api-cidr CIDR [options]
#   --nodes N             node instances (1..64)
#   --bucket BUCKET       S3 bucket for the release tarball (handed to the instances as a presigned URL)
#   --model-url URL       where every instance downloads the GGUF model from (https or presigned S3)
#   --api-cidr CIDR       who may reach the API (port 8080 on the coordinator), e.g. 203.0.113.0/24
#   --ssh-cidr CIDR       also open port 22 to CIDR (default: closed)
#   --key-name NAME       EC2 key pair for SSH (default: none)
#   --region REGION       AWS region (default: $AWS_REGION, else eu-west-1)
#   --instance-type TYPE  node and coordinator instance type (default: c7i.2xlarge)
#   --subnet-id ID        subnet (default: the default VPC's default subnet)
#   --vpc-id ID           VPC of the security group (default: the default VPC)
#   --ptype pipeline|tensor, --dtype FLOAT16|INT8|FLOAT32   how the coordinator splits the model
#   --name NAME           cluster name, used in tags and the security group (default: juno)
#   --dry-run             print every command (and the user-data) instead of running it; needs no AWS access
# Needs: the packaged apps (./mvnw -B -DskipTests package), and for a real run the aws CLI v2 with credentials.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NODES="" BUCKET="" MODEL_URL="" API_CIDR="" SSH_CIDR="" KEY_NAME="" SUBNET_ID="" VPC_ID=""
REGION="${AWS_REGION:-eu-west-1}" INSTANCE_TYPE="c7i.2xlarge" PTYPE="pipeline" DTYPE="FLOAT16" NAME="juno"
DRY_RUN=0
NODE_PORT=19092
API_PORT=8080
# Ubuntu 24.04 LTS, resolved by EC2 itself from the public SSM parameter
IMAGE="resolve:ssm:/aws/service/canonical/ubuntu/server/24.04/stable/current/amd64/hvm/ebs-gp3/ami-id"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
fail() {
  echo "provision: $*" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) NODES="${2:-}"; shift 2 ;;
    --bucket) BUCKET="${2:-}"; shift 2 ;;
    --model-url) MODEL_URL="${2:-}"; shift 2 ;;
    --api-cidr) API_CIDR="${2:-}"; shift 2 ;;
    --ssh-cidr) SSH_CIDR="${2:-}"; shift 2 ;;
    --key-name) KEY_NAME="${2:-}"; shift 2 ;;
    --region) REGION="${2:-}"; shift 2 ;;
    --instance-type) INSTANCE_TYPE="${2:-}"; shift 2 ;;
    --subnet-id) SUBNET_ID="${2:-}"; shift 2 ;;
    --vpc-id) VPC_ID="${2:-}"; shift 2 ;;
    --ptype) PTYPE="${2:-}"; shift 2 ;;
    --dtype) DTYPE="${2:-}"; shift 2 ;;
    --name) NAME="${2:-}"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage ;;
    *) fail "unknown option '$1' (see --help)" ;;
  esac
done

[[ "$NODES" =~ ^[1-9][0-9]*$ ]] && [ "$NODES" -le 64 ] || fail "--nodes must be a number in 1..64, got '${NODES}'"
[ -n "$BUCKET" ] || fail "--bucket is required"
[[ "$MODEL_URL" =~ ^https?://[^\'[:space:]]+$ ]] || fail "--model-url must be an http(s) URL, got '${MODEL_URL}'"
cidr='^[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}$'
[[ "$API_CIDR" =~ $cidr ]] || fail "--api-cidr must be an IPv4 CIDR such as 203.0.113.0/24, got '${API_CIDR}'"
[ -z "$SSH_CIDR" ] || [[ "$SSH_CIDR" =~ $cidr ]] || fail "--ssh-cidr must be an IPv4 CIDR, got '${SSH_CIDR}'"
case "$PTYPE" in pipeline|tensor) ;; *) fail "--ptype must be pipeline or tensor, got '${PTYPE}'" ;; esac
case "$DTYPE" in FLOAT16|INT8|FLOAT32) ;; *) fail "--dtype must be FLOAT16, INT8 or FLOAT32, got '${DTYPE}'" ;; esac
[[ "$NAME" =~ ^[a-z][a-z0-9-]{0,30}$ ]] || fail "--name must be lower-case letters, digits and dashes, got '${NAME}'"
for app in coordinator-service node-service; do
  [ -f "$ROOT/$app/target/quarkus-app/quarkus-run.jar" ] \
    || fail "$app is not packaged; run ./mvnw -B -DskipTests package first"
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/juno-provision.XXXXXX")"
TARBALL="$WORK/juno-release.tar.gz"
KEY="releases/$NAME/juno-release.tar.gz"

# Every command is printed to fd 3 (this script's stdout), even where its own output is captured or dropped.
exec 3>&1
# Prints a command; runs it unless --dry-run.
run() {
  printf '+' >&3
  printf ' %q' "$@" >&3
  printf '\n' >&3
  if [ "$DRY_RUN" = 0 ]; then
    "$@"
  fi
}
# As run, for commands whose output is needed: prints PLACEHOLDER on --dry-run instead.
capture() {
  local placeholder="$1"
  shift
  printf '+' >&3
  printf ' %q' "$@" >&3
  printf '\n' >&3
  if [ "$DRY_RUN" = 0 ]; then
    "$@"
  else
    echo "$placeholder"
  fi
}

# user-data: installs Java 25, the release, the units and one environment file, then starts the service.
# $1 = node|coordinator, $2 = the environment file's content
user_data() {
  local role="$1" env="$2"
  cat <<EOF
#!/bin/bash
# Juno $role, installed by deploy/aws/provision.sh
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends ca-certificates curl gpg
curl -fsSL https://packages.adoptium.net/artifactory/api/gpg/key/public | gpg --dearmor -o /usr/share/keyrings/adoptium.gpg
echo "deb [signed-by=/usr/share/keyrings/adoptium.gpg] https://packages.adoptium.net/artifactory/deb \$(. /etc/os-release; echo \$VERSION_CODENAME) main" > /etc/apt/sources.list.d/adoptium.list
apt-get update -q
apt-get install -y -q --no-install-recommends temurin-25-jre
id juno >/dev/null 2>&1 || useradd --system --home-dir /var/lib/juno --shell /usr/sbin/nologin juno
mkdir -p /opt/juno /etc/juno /var/lib/juno/models
curl -fsSL '$RELEASE_URL' | tar -xz -C /opt/juno
chown -R root:root /opt/juno
curl -fsSL -o /var/lib/juno/models/model.gguf '$MODEL_URL'
chown -R juno:juno /var/lib/juno
cat > /etc/systemd/system/juno-$role.service <<'UNIT'
$(cat "$ROOT/deploy/systemd/juno-$role.service")
UNIT
cat > /etc/juno/$role.env <<'ENV'
$env
ENV
chown root:juno /etc/juno/$role.env
chmod 0640 /etc/juno/$role.env
systemctl daemon-reload
systemctl enable --now juno-$role.service
EOF
}

echo "# Juno on EC2: $NODES node(s) + 1 coordinator, $PTYPE/$DTYPE, $INSTANCE_TYPE in $REGION$([ "$DRY_RUN" = 1 ] && echo ' (dry run: nothing is called)')"

# 1. the release: the launcher, its Java finder, both packaged apps and the deploy notes
run tar -czf "$TARBALL" -C "$ROOT" juno .mvn/juno-java.sh coordinator-service/target/quarkus-app \
  node-service/target/quarkus-app docs/deploy.md
run aws s3 cp --region "$REGION" "$TARBALL" "s3://$BUCKET/$KEY"
RELEASE_URL="$(capture "https://$BUCKET.s3.amazonaws.com/$KEY?X-Amz-Signature=DRY-RUN" \
  aws s3 presign --region "$REGION" "s3://$BUCKET/$KEY" --expires-in 7200)"

# 2. network: one security group; nodes talk to the coordinator inside it, the API is open to --api-cidr
if [ -z "$VPC_ID" ]; then
  VPC_ID="$(capture "vpc-DRYRUN" aws ec2 describe-vpcs --region "$REGION" --filters Name=is-default,Values=true \
    --query 'Vpcs[0].VpcId' --output text)"
fi
SG_ID="$(capture "sg-DRYRUN" aws ec2 create-security-group --region "$REGION" --group-name "$NAME-cluster" \
  --description "Juno cluster $NAME" --vpc-id "$VPC_ID" --query GroupId --output text)"
run aws ec2 authorize-security-group-ingress --region "$REGION" --group-id "$SG_ID" \
  --protocol tcp --port "$NODE_PORT" --source-group "$SG_ID" >/dev/null
run aws ec2 authorize-security-group-ingress --region "$REGION" --group-id "$SG_ID" \
  --protocol tcp --port "$API_PORT" --cidr "$API_CIDR" >/dev/null
if [ -n "$SSH_CIDR" ]; then
  run aws ec2 authorize-security-group-ingress --region "$REGION" --group-id "$SG_ID" \
    --protocol tcp --port 22 --cidr "$SSH_CIDR" >/dev/null
fi

common=(--region "$REGION" --image-id "$IMAGE" --instance-type "$INSTANCE_TYPE" --security-group-ids "$SG_ID"
  --metadata-options HttpTokens=required --block-device-mappings
  'DeviceName=/dev/sda1,Ebs={VolumeSize=64,VolumeType=gp3,DeleteOnTermination=true}')
[ -z "$KEY_NAME" ] || common+=(--key-name "$KEY_NAME")
[ -z "$SUBNET_ID" ] || common+=(--subnet-id "$SUBNET_ID")

# 3. nodes, one run-instances each (each gets its own JUNO_NODE_ID)
NODE_IDS=()
for i in $(seq 1 "$NODES"); do
  ud="$WORK/user-data-node$i.sh"
  user_data node "$(sed -e "s/^JUNO_NODE_ID=.*/JUNO_NODE_ID=node$i/" "$ROOT/deploy/systemd/node.env")" \
    > "$ud"
  if [ "$DRY_RUN" = 1 ]; then
    echo "# user-data of node$i ($ud):"
    sed 's/^/#   /' "$ud"
  fi
  NODE_IDS+=("$(capture "i-DRYRUNnode$i" aws ec2 run-instances "${common[@]}" --count 1 --user-data "file://$ud" \
    --tag-specifications "ResourceType=instance,Tags=[{Key=Name,Value=$NAME-node$i},{Key=juno-cluster,Value=$NAME},{Key=juno-role,Value=node}]" \
    --query 'Instances[0].InstanceId' --output text)")
done
run aws ec2 wait instance-running --region "$REGION" --instance-ids "${NODE_IDS[@]}"

# 4. the coordinator, pointed at the nodes' private addresses in shard order
NODE_LIST=""
for i in $(seq 1 "$NODES"); do
  ip="$(capture "10.0.0.$((10 + i))" aws ec2 describe-instances --region "$REGION" --instance-ids "${NODE_IDS[$((i - 1))]}" \
    --query 'Reservations[0].Instances[0].PrivateIpAddress' --output text)"
  NODE_LIST="${NODE_LIST:+$NODE_LIST,}$ip:$NODE_PORT"
done
ud="$WORK/user-data-coordinator.sh"
user_data coordinator "$(sed -e "s/^JUNO_NODES=.*/JUNO_NODES=$NODE_LIST/" -e "s/^JUNO_PTYPE=.*/JUNO_PTYPE=$PTYPE/" \
  -e "s/^JUNO_DTYPE=.*/JUNO_DTYPE=$DTYPE/" "$ROOT/deploy/systemd/coordinator.env")" \
  > "$ud"
if [ "$DRY_RUN" = 1 ]; then
  echo "# user-data of the coordinator ($ud):"
  sed 's/^/#   /' "$ud"
fi
COORD_ID="$(capture "i-DRYRUNcoordinator" aws ec2 run-instances "${common[@]}" --count 1 --user-data "file://$ud" \
  --tag-specifications "ResourceType=instance,Tags=[{Key=Name,Value=$NAME-coordinator},{Key=juno-cluster,Value=$NAME},{Key=juno-role,Value=coordinator}]" \
  --query 'Instances[0].InstanceId' --output text)"
run aws ec2 wait instance-running --region "$REGION" --instance-ids "$COORD_ID"
API_HOST="$(capture "203.0.113.10" aws ec2 describe-instances --region "$REGION" --instance-ids "$COORD_ID" \
  --query 'Reservations[0].Instances[0].PublicIpAddress' --output text)"

echo "# nodes: ${NODE_IDS[*]} ($NODE_LIST); coordinator: $COORD_ID"
echo "# API (ready a few minutes after boot): http://$API_HOST:$API_PORT/v1  health: http://$API_HOST:$API_PORT/q/health/ready"
echo "# tear down: aws ec2 terminate-instances --region $REGION --instance-ids ${NODE_IDS[*]} $COORD_ID"
if [ "$DRY_RUN" = 1 ]; then
  rm -rf "$WORK"
fi
