# shellcheck shell=bash
# Certificates and kubeconfigs of the embedded cluster, made with openssl (EC P-256).
# Sourced by up.sh after lib.sh.

# mkcert NAME CN [O] [SANS]   SANS like "IP:10.0.0.1,DNS:foo"
mkcert() {
    local name=$1 cn=$2 o=${3:-} sans=${4:-} subj ext
    subj="/CN=$cn"
    [[ -n $o ]] && subj="/O=$o$subj"
    ext="$PKI_DIR/$name.ext"
    {
        echo "basicConstraints=critical,CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        if [[ -n $sans ]]; then
            echo "extendedKeyUsage=serverAuth,clientAuth"
            echo "subjectAltName=$sans"
        else
            echo "extendedKeyUsage=clientAuth"
        fi
    } >"$ext"
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI_DIR/$name.key" 2>/dev/null
    openssl req -new -key "$PKI_DIR/$name.key" -subj "$subj" -out "$PKI_DIR/$name.csr" 2>/dev/null
    openssl x509 -req -in "$PKI_DIR/$name.csr" -CA "$PKI_DIR/ca.crt" -CAkey "$PKI_DIR/ca.key" \
        -CAcreateserial -days 3650 -extfile "$ext" -out "$PKI_DIR/$name.crt" 2>/dev/null
    rm -f "$PKI_DIR/$name.csr" "$ext"
}

# mkkubeconfig FILE USER CERTNAME SERVER [embed]
mkkubeconfig() {
    local file=$1 user=$2 cert=$3 server=$4 embed=${5:-}
    local ca crt key
    if [[ -n $embed ]]; then
        ca="certificate-authority-data: $(base64 -w0 <"$PKI_DIR/ca.crt")"
        crt="client-certificate-data: $(base64 -w0 <"$PKI_DIR/$cert.crt")"
        key="client-key-data: $(base64 -w0 <"$PKI_DIR/$cert.key")"
    else
        ca="certificate-authority: $PKI_DIR/ca.crt"
        crt="client-certificate: $PKI_DIR/$cert.crt"
        key="client-key: $PKI_DIR/$cert.key"
    fi
    cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: podnet
  cluster:
    server: $server
    $ca
users:
- name: $user
  user:
    $crt
    $key
contexts:
- name: podnet
  context:
    cluster: podnet
    user: $user
current-context: podnet
EOF
    chmod 600 "$file"
}

make_pki() {
    rm -rf "$PKI_DIR"
    mkdir -p "$PKI_DIR"
    chmod 700 "$PKI_DIR"
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI_DIR/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI_DIR/ca.key" -subj "/CN=podnet-cluster-ca" -days 3650 \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
        -out "$PKI_DIR/ca.crt" 2>/dev/null
    mkcert apiserver kube-apiserver "" \
        "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:$API_SERVICE_IP,IP:$CP_IP,IP:127.0.0.1"
    mkcert admin podnet-admin system:masters
    mkcert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
    mkcert controller-manager system:kube-controller-manager
    mkcert scheduler system:kube-scheduler
    mkcert kube-proxy system:kube-proxy
    mkcert flannel podnet-flannel
    local n
    for ((n = 1; n <= NODES; n++)); do
        mkcert "kubelet-$n" "system:node:$(node_name "$n")" system:nodes
        mkcert "kubelet-$n-serving" "$(node_name "$n")" "" "DNS:$(node_name "$n"),IP:$(node_ip "$n")"
    done
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI_DIR/sa.key" 2>/dev/null
    openssl ec -in "$PKI_DIR/sa.key" -pubout -out "$PKI_DIR/sa.pub" 2>/dev/null
    chmod 600 "$PKI_DIR"/*.key

    local api="https://$CP_IP:6443" local_api="https://127.0.0.1:6443"
    mkkubeconfig "$PKI_DIR/controller-manager.kubeconfig" system:kube-controller-manager controller-manager "$local_api"
    mkkubeconfig "$PKI_DIR/scheduler.kubeconfig" system:kube-scheduler scheduler "$local_api"
    mkkubeconfig "$PKI_DIR/kube-proxy.kubeconfig" system:kube-proxy kube-proxy "$api"
    mkkubeconfig "$PKI_DIR/flannel.kubeconfig" podnet-flannel flannel "$api"
    for ((n = 1; n <= NODES; n++)); do
        mkkubeconfig "$PKI_DIR/kubelet-$n.kubeconfig" "system:node:$(node_name "$n")" "kubelet-$n" "$api"
    done
    mkdir -p "$STATE_DIR"
    mkkubeconfig "$STATE_DIR/kubeconfig" podnet-admin admin "$api" embed
}
