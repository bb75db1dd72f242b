module {
  func.func @attention_deberta_exported(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
      %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
      %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]},
      %kp: tensor<512x12x64xf32> {tfm.name = "pos_key"},
      %qp: tensor<512x12x64xf32> {tfm.name = "pos_query"})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %q3 = tfm.reshape %q : tensor<1x12x?x64xf32> -> tensor<12x?x64xf32>
    %k3 = tfm.reshape %k : tensor<1x12x?x64xf32> -> tensor<12x?x64xf32>
    %v3 = tfm.reshape %v : tensor<1x12x?x64xf32> -> tensor<12x?x64xf32>
    %scale = arith.constant dense<13.856406> : tensor<f32>
    %kT = tfm.transpose %k3 {permutation = array<i64: 0, 2, 1>} : tensor<12x?x64xf32> -> tensor<12x64x?xf32>
    %kTs = tfm.div %kT, %scale : tensor<12x64x?xf32>, tensor<f32> -> tensor<12x64x?xf32>
    %s = tfm.matmul %q3, %kTs : tensor<12x?x64xf32>, tensor<12x64x?xf32> -> tensor<12x?x?xf32>
    %qids = tfm.arange %q3 {axis = 1 : i64} : tensor<12x?x64xf32> -> tensor<?xi64>
    %kids = tfm.arange %k3 {axis = 1 : i64} : tensor<12x?x64xf32> -> tensor<?xi64>
    %qcol = tfm.reshape %qids : tensor<?xi64> -> tensor<?x1xi64>
    %krow = tfm.reshape %kids : tensor<?xi64> -> tensor<1x?xi64>
    %rp = tfm.sub %qcol, %krow : tensor<?x1xi64>, tensor<1x?xi64> -> tensor<?x?xi64>
    %sign = tfm.sign %rp : tensor<?x?xi64> -> tensor<?x?xi64>
    %mid = arith.constant dense<128> : tensor<i64>
    %nmid = arith.constant dense<-128> : tensor<i64>
    %lt = tfm.compare %rp, %mid {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
    %gt = tfm.compare %rp, %nmid {predicate = #tfm.compare<gt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
    %lti = tfm.cast %lt : tensor<?x?xi1> -> tensor<?x?xi64>
    %gti = tfm.cast %gt : tensor<?x?xi1> -> tensor<?x?xi64>
    %near = tfm.mul %lti, %gti : tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
    %midm1 = arith.constant dense<127> : tensor<i64>
    %abs = tfm.abs %rp : tensor<?x?xi64> -> tensor<?x?xi64>
    %abs_pos = tfm.where %near, %midm1, %abs : tensor<?x?xi64>, tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
    %absf = tfm.cast %abs_pos : tensor<?x?xi64> -> tensor<?x?xf32>
    %midf = arith.constant dense<128.0> : tensor<f32>
    %ratio = tfm.div %absf, %midf : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
    %lr = tfm.log %ratio : tensor<?x?xf32> -> tensor<?x?xf32>
    %maxratio = arith.constant dense<3.9921875> : tensor<f32>
    %lmax = tfm.log %maxratio : tensor<f32> -> tensor<f32>
    %q1 = tfm.div %lr, %lmax : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
    %midm1f = arith.constant dense<127.0> : tensor<f32>
    %q2 = tfm.mul %q1, %midm1f : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
    %q3c = tfm.ceil %q2 : tensor<?x?xf32> -> tensor<?x?xf32>
    %log_pos = tfm.add %q3c, %midf : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
    %small = tfm.compare %abs_pos, %mid {predicate = #tfm.compare<le>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
    %rpf = tfm.cast %rp : tensor<?x?xi64> -> tensor<?x?xf32>
    %signf = tfm.cast %sign : tensor<?x?xi64> -> tensor<?x?xf32>
    %far = tfm.mul %log_pos, %signf : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
    %bucket = tfm.where %small, %rpf, %far : tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
    %rel_pos = tfm.cast %bucket : tensor<?x?xf32> -> tensor<?x?xi64>
    %rel4 = tfm.reshape %rel_pos : tensor<?x?xi64> -> tensor<1x1x?x?xi64>
    %pk = tfm.transpose %kp {permutation = array<i64: 1, 0, 2>} : tensor<512x12x64xf32> -> tensor<12x512x64xf32>
    %pq = tfm.transpose %qp {permutation = array<i64: 1, 0, 2>} : tensor<512x12x64xf32> -> tensor<12x512x64xf32>
    %span = arith.constant dense<256> : tensor<i64>
    %zero = arith.constant dense<0> : tensor<i64>
    %top = arith.constant dense<511> : tensor<i64>
    %pkT = tfm.transpose %pk {permutation = array<i64: 0, 2, 1>} : tensor<12x512x64xf32> -> tensor<12x64x512xf32>
    %c2p = tfm.matmul %q3, %pkT : tensor<12x?x64xf32>, tensor<12x64x512xf32> -> tensor<12x?x512xf32>
    %c2p_a = tfm.add %rel4, %span : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi64>
    %c2p_b = tfm.maximum %c2p_a, %zero : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi64>
    %c2p_pos = tfm.minimum %c2p_b, %top : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi64>
    %c2p_sq = tfm.reshape %c2p_pos : tensor<1x1x?x?xi64> -> tensor<1x?x?xi64>
    %c2p_idx = tfm.expand %c2p_sq : tensor<1x?x?xi64> -> tensor<12x?x?xi64>
    %c2p_g = tfm.gather_elements %c2p, %c2p_idx {axis = 2 : i64} : tensor<12x?x512xf32>, tensor<12x?x?xi64> -> tensor<12x?x?xf32>
    %c2p_s = tfm.div %c2p_g, %scale : tensor<12x?x?xf32>, tensor<f32> -> tensor<12x?x?xf32>
    %p2c_n = tfm.neg %rel4 : tensor<1x1x?x?xi64> -> tensor<1x1x?x?xi64>
    %p2c_a = tfm.add %p2c_n, %span : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi64>
    %p2c_b = tfm.maximum %p2c_a, %zero : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi64>
    %p2c_pos = tfm.minimum %p2c_b, %top : tensor<1x1x?x?xi64>, tensor<i64> -> tensor<1x1x?x?xi64>
    %pqT = tfm.transpose %pq {permutation = array<i64: 0, 2, 1>} : tensor<12x512x64xf32> -> tensor<12x64x512xf32>
    %p2c = tfm.matmul %k3, %pqT : tensor<12x?x64xf32>, tensor<12x64x512xf32> -> tensor<12x?x512xf32>
    %p2c_sq = tfm.reshape %p2c_pos : tensor<1x1x?x?xi64> -> tensor<1x?x?xi64>
    %p2c_idx = tfm.expand %p2c_sq : tensor<1x?x?xi64> -> tensor<12x?x?xi64>
    %p2c_g = tfm.gather_elements %p2c, %p2c_idx {axis = 2 : i64} : tensor<12x?x512xf32>, tensor<12x?x?xi64> -> tensor<12x?x?xf32>
    %p2c_t = tfm.transpose %p2c_g {permutation = array<i64: 0, 2, 1>} : tensor<12x?x?xf32> -> tensor<12x?x?xf32>
    %p2c_s = tfm.div %p2c_t, %scale : tensor<12x?x?xf32>, tensor<f32> -> tensor<12x?x?xf32>
    %rel_att = tfm.add %c2p_s, %p2c_s : tensor<12x?x?xf32>, tensor<12x?x?xf32> -> tensor<12x?x?xf32>
    %scores = tfm.add %s, %rel_att : tensor<12x?x?xf32>, tensor<12x?x?xf32> -> tensor<12x?x?xf32>
    %s4 = tfm.reshape %scores : tensor<12x?x?xf32> -> tensor<1x12x?x?xf32>
    %p = tfm.softmax %s4 {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %p3 = tfm.reshape %p : tensor<1x12x?x?xf32> -> tensor<12x?x?xf32>
    %ctx = tfm.matmul %p3, %v3 : tensor<12x?x?xf32>, tensor<12x?x64xf32> -> tensor<12x?x64xf32>
    %o = tfm.reshape %ctx : tensor<12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
